// Lock names and findings in the machine formats, over a profile made here whose locks carry the
// names symbolization gives (a symbol, a first use): the JSON report's locks, lock-order edges and
// inversions and its findings; the csv name column; the html page's data; the stack formats'
// leaves. The same formats of real runs: tests/integration/lock_names_formats_test.cpp.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "code_locations.h"
#include "one_mutex_profile.h"
#include "report/html_page.h"
#include "report/report_writer.h"

namespace lockscope {
namespace {

using nlohmann::json;

// Two mutexes of pid 7: account_a (a global: its symbol) and a heap mutex named by its first use,
// taken in both orders (a lock-order inversion); account_a was waited for.
Profile named_profile() {
  Profile profile = one_mutex_profile(code_location("transfer", "/src/bank.c", 40),
                                      code_location("main", "/src/main.c", 9));
  ProcessProfile& process = profile.processes[0];
  LockSummary& account = process.locks[0];
  account.name = "account_a";
  account.name_source = LockNameSource::kSymbol;
  LockSummary heap;
  heap.address = 0x5000;
  heap.first_use_site = code_location("open_cache", "/src/cache.cc", 83);
  heap.name = heap.first_use_site.label;
  heap.name_source = LockNameSource::kFirstUse;
  process.locks.push_back(heap);
  const CodeLocation first = code_location("ab", "/src/bank.c", 50);
  const CodeLocation second = code_location("ba", "/src/bank.c", 60);
  LockOrderEdge a_then_heap;
  a_then_heap.from_lock = 0;
  a_then_heap.to_lock = 1;
  a_then_heap.from_site = first;
  a_then_heap.to_site = second;
  LockOrderEdge heap_then_a = a_then_heap;
  std::swap(heap_then_a.from_lock, heap_then_a.to_lock);
  std::swap(heap_then_a.from_site, heap_then_a.to_site);
  process.lock_order = {a_then_heap, heap_then_a};
  return profile;
}

std::string written(const std::string& format, const Profile& profile,
                    const ReportOptions& options = {}) {
  std::ostringstream out;
  make_report_writer(format)->write(profile, options, out);
  return out.str();
}

TEST(LockNamesInFormats, JsonLocksHaveTheirNamesAndHowTheyWereFound) {
  const json report = json::parse(written("json", named_profile()));
  EXPECT_EQ(report["schema_version"], 5);
  const json& locks = report["processes"][0]["locks"];
  EXPECT_EQ(locks[0]["name"], "account_a");
  EXPECT_EQ(locks[0]["name_source"], "symbol");
  EXPECT_EQ(locks[0]["address"], 0xfeed);
  EXPECT_TRUE(locks[0]["first_use_site"].is_null());
  EXPECT_EQ(locks[1]["name"], "open_cache /src/cache.cc:83");
  EXPECT_EQ(locks[1]["name_source"], "first-use");
  EXPECT_EQ(locks[1]["first_use_site"]["line"], 83);
  EXPECT_EQ(locks[1]["same_name_locks"], 1);
}

TEST(LockNamesInFormats, JsonLockOrderNamesItsLocksAndTheInversionComesFromTheViews) {
  const Profile profile = named_profile();
  const json report = json::parse(written("json", profile));
  const json& order = report["processes"][0]["lock_order"];
  EXPECT_EQ(order["edges"][0]["held_name"], "account_a");
  EXPECT_EQ(order["edges"][0]["taken_name"], "open_cache /src/cache.cc:83");
  const ProfileViews views(profile);
  ASSERT_EQ(views.processes()[0].inversions.size(), 1u);
  ASSERT_EQ(order["inversions"].size(), 1u);
  EXPECT_EQ(order["inversions"][0]["edges"], json(views.processes()[0].inversions[0].edges));
  EXPECT_EQ(order["inversions"][0]["locks"].size(), 2u);
  EXPECT_NE(order["inversions"][0]["locks"].dump().find("account_a"), std::string::npos);
}

TEST(LockNamesInFormats, JsonFindingsAreTheViewsRankedWithLocksByName) {
  const Profile profile = named_profile();
  const ProfileViews views(profile);
  const json report = json::parse(written("json", profile));
  const json& findings = report["findings"];
  ASSERT_EQ(findings.size(), views.findings().size());
  for (size_t i = 0; i < findings.size(); ++i) {
    const Finding& finding = views.findings()[i];
    EXPECT_EQ(findings[i]["rule"], finding.rule);
    EXPECT_EQ(findings[i]["severity"], severity_name(finding.severity));
    EXPECT_EQ(findings[i]["title"], finding.title);
    EXPECT_EQ(findings[i]["advice"], finding.advice);
    EXPECT_EQ(findings[i]["time_at_stake_ns"], finding.time_at_stake_ns);
    ASSERT_EQ(findings[i]["locks"].size(), finding.locks.size());
    for (size_t l = 0; l < finding.locks.size(); ++l)
      EXPECT_EQ(findings[i]["locks"][l]["name"], views.lock(finding.locks[l]).name);
    ASSERT_EQ(findings[i]["evidence"].size(), finding.evidence.size());
    for (size_t e = 0; e < finding.evidence.size(); ++e) {  // in order, repeated keys kept
      const Evidence& evidence = finding.evidence[e];
      EXPECT_EQ(findings[i]["evidence"][e]["key"], evidence.key);
      EXPECT_EQ(findings[i]["evidence"][e]["value"], evidence.value) << evidence.key;
      EXPECT_EQ(findings[i]["evidence"][e]["text"], evidence.text) << evidence.key;
    }
  }
  // The verdict names the lock waited for: account_a (900 ns), by process and index too.
  const json& verdict = findings[0];
  EXPECT_EQ(verdict["rule"], "verdict");
  EXPECT_EQ(verdict["locks"][0], json({{"process", 0},
                                       {"pid", 7},
                                       {"index", 0},
                                       {"name", "account_a"},
                                       {"name_source", "symbol"},
                                       {"address", 0xfeed},
                                       {"generation", 0}}));
  EXPECT_TRUE(verdict["sites"].empty());
}

TEST(LockNamesInFormats, CsvNamesEachLockAfterItsPid) {
  ReportOptions all;
  all.all = true;
  const std::string csv = written("csv", named_profile(), all);
  EXPECT_EQ(csv.substr(0, csv.find(",acquired")), "pid,name,address,generation,side,kind");
  EXPECT_NE(csv.find("\r\n7,account_a,0xfeed,0,,mutex,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\r\n7,open_cache /src/cache.cc:83,0x5000,0,,mutex,"), std::string::npos)
      << csv;
}

TEST(LockNamesInFormats, StackLeavesNameTheLockAndKeepLocksOfOneNameApart) {
  Profile profile = named_profile();
  EXPECT_NE(written("collapsed", profile).find(";mutex account_a 600\n"), std::string::npos);
  // Two locks of one name (one loop's): each its own leaf, by its address after the name.
  LockSummary& account = profile.processes[0].locks[0];
  account.same_name_locks = 2;
  EXPECT_NE(written("collapsed", profile).find(";mutex account_a 0xfeed 600\n"), std::string::npos);
}

// The page's data: the JSON document inside its <script id="lockscope-data">.
json html_data(const Profile& profile) {
  const std::string page = written("html", profile);
  const std::string open = "<script type=\"application/json\" id=\"lockscope-data\">";
  const size_t begin = page.find(open) + open.size();
  return json::parse(page.substr(begin, page.find("</script>", begin) - begin));
}

TEST(LockNamesInFormats, HtmlDataHasTheFindingsFirstAndEveryLockRowItsName) {
  const Profile profile = named_profile();
  const ProfileViews views(profile);
  const json data = html_data(profile);
  const json& findings = data["findings"];
  ASSERT_EQ(findings.size(), views.findings().size());
  EXPECT_EQ(findings[0]["rule"], "verdict");
  EXPECT_EQ(findings[0]["title"], views.findings()[0].title);
  EXPECT_EQ(findings[0]["locks"][0]["name"], "account_a");
  EXPECT_EQ(findings[0]["locks"][0]["phrase"], "mutex account_a");
  ASSERT_EQ(findings[0]["evidence"].size(), views.findings()[0].evidence.size());
  EXPECT_EQ(findings[0]["evidence"][0]["text"], views.findings()[0].evidence[0].text);
  const json& rows = data["locks"]["rows"];
  ASSERT_EQ(rows.size(), 1u);  // the heap mutex was never used
  EXPECT_EQ(rows[0]["name"], "account_a");
  EXPECT_EQ(rows[0]["phrase"], "mutex account_a");
  // The flame graph's leaf and the blame's lock are named too.
  EXPECT_NE(data["processes"][0]["flame"]["wait"].dump().find("\"mutex account_a\""),
            std::string::npos);
}

}  // namespace
}  // namespace lockscope
