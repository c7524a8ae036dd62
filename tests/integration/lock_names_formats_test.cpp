// Lock names and findings in every machine format, from one real run of the lock_names_formats
// fixture (a global pthread mutex `account_a` and a heap std::mutex, each waited for once): each
// format names the global by its symbol and the std::mutex by the call site of its first
// acquisition, as the profile read back says, and carries the verdict naming the most waited-for
// lock (the cache's). JSON, csv, sqlite (read with the sqlite3 CLI), pprof (read with `go tool
// pprof`, whose -tagfocus selects one lock by its name), collapsed and sarif; html has its own test
// in html_report_test.cpp, and the sarif log's validation by Microsoft's validator is
// validate_sarif_report.py.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/profile_symbolization.h"
#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

using nlohmann::json;

// The fixture is C++: the harness's marker_line reads .c sources.
int source_line(const std::string& marker) {
  std::ifstream in(std::string(FIXTURE_SOURCE_DIR) + "/lock_names_formats.cpp");
  std::string line;
  for (int number = 1; std::getline(in, line); ++number)
    if (line.find("// @" + marker) != std::string::npos) return number;
  ADD_FAILURE() << "no marker @" << marker;
  return -1;
}

class LockNamesFormats : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TemporaryDirectory;
    process_ = new ProcessProfile(record_unchanged(*dir_, "lock_names_formats"));
  }
  static void TearDownTestSuite() {
    delete process_;
    delete dir_;
  }

  void SetUp() override {
    account_ = lock_acquired_at(*process_, "lock_names_formats.cpp", source_line("account-waiter"));
    ASSERT_NE(account_, nullptr);
    for (const LockSummary& lock : process_->locks)
      if (lock.name_source == LockNameSource::kCaller) {
        ASSERT_EQ(cache_, nullptr)
            << "two locks named by a caller: " << cache_->name << ", " << lock.name;
        cache_ = &lock;
      }
    ASSERT_NE(cache_, nullptr);
  }

  std::string report(const std::vector<std::string>& options) {
    std::vector<std::string> args = {"report", dir_->path()};
    args.insert(args.end(), options.begin(), options.end());
    const CommandResult run = run_lockscope(args);
    EXPECT_EQ(run.exit_status, 0) << run.err;
    return run.out;
  }

  static TemporaryDirectory* dir_;
  static ProcessProfile* process_;
  const LockSummary* account_ = nullptr;  // the global: named by its symbol
  const LockSummary* cache_ = nullptr;    // the heap std::mutex: by its waiter's line
};

TemporaryDirectory* LockNamesFormats::dir_ = nullptr;
ProcessProfile* LockNamesFormats::process_ = nullptr;

TEST_F(LockNamesFormats, TheProfileNamesTheGlobalBySymbolAndTheStdMutexByItsFirstUse) {
  EXPECT_EQ(account_->name, "account_a");
  EXPECT_EQ(account_->name_source, LockNameSource::kSymbol);
  EXPECT_EQ(account_->contended, 1u);
  // The call site of its first acquisition, as the runtime records it, is the return address of
  // pthread_mutex_lock, which for a std::mutex is inside libstdc++'s std::mutex::lock (not inlined
  // at -O2): every std::mutex of the program would share it. The lock is named instead after the
  // fixture's own line on the stack its thread waited from, @cache-waiter.
  EXPECT_TRUE(is_system_file(cache_->first_use_site.file)) << cache_->first_use_site.label;
  EXPECT_NE(cache_->name, cache_->first_use_site.label);
  EXPECT_NE(
      cache_->name.find("lock_names_formats.cpp:" + std::to_string(source_line("cache-waiter"))),
      std::string::npos)
      << cache_->name;
  EXPECT_FALSE(cache_->init_site.known());
  EXPECT_EQ(cache_->contended, 1u);
  EXPECT_GT(cache_->wait_sum_ns, account_->wait_sum_ns);  // held ten times as long
}

TEST_F(LockNamesFormats, JsonNamesEveryLockAndTheVerdictNamesTheMostWaitedFor) {
  const json document = json::parse(report({"-f", "json"}));
  EXPECT_EQ(document["schema_version"], 5);
  std::map<uint64_t, json> by_address;
  for (const json& lock : document["processes"][0]["locks"]) by_address[lock["address"]] = lock;
  const json& account = by_address.at(account_->address);
  EXPECT_EQ(account["name"], "account_a");
  EXPECT_EQ(account["name_source"], "symbol");
  const json& cache = by_address.at(cache_->address);
  EXPECT_EQ(cache["name"], cache_->name);
  EXPECT_EQ(cache["name_source"], "caller");
  EXPECT_EQ(cache["first_use_site"]["label"], cache_->first_use_site.label);
  EXPECT_TRUE(cache["init_site"].is_null());
  const json& findings = document["findings"];
  ASSERT_FALSE(findings.empty());
  const json& verdict = findings[0];
  EXPECT_EQ(verdict["rule"], "verdict");
  ASSERT_EQ(verdict["locks"].size(), 1u) << verdict.dump(1);
  EXPECT_EQ(verdict["locks"][0]["name"], cache_->name);
  EXPECT_EQ(verdict["locks"][0]["address"], cache_->address);
  EXPECT_EQ(verdict["locks"][0]["pid"], process_->pid);
  const json* top = nullptr;
  for (const json& item : verdict["evidence"])
    if (item["key"] == "top_lock_wait_ns") top = &item;
  ASSERT_NE(top, nullptr) << verdict.dump(1);
  EXPECT_EQ((*top)["value"], cache_->wait_sum_ns);
  EXPECT_NE((*top)["text"].get<std::string>().find(cache_->name), std::string::npos);
}

// A field as RFC 4180 writes it: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\r\n") == std::string::npos) return value;
  std::string quoted = "\"";
  for (char c : value) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + '"';
}

TEST_F(LockNamesFormats, CsvHasANameColumn) {
  for (const char* table : {"locks", "sites"}) {
    const std::string csv = report({"-f", "csv", "--all", "--table", table});
    EXPECT_EQ(csv.substr(0, csv.find(',', csv.find(',') + 1)), "pid,name") << table;
    const std::string account =
        fmt::format("\r\n{},account_a,0x{:x},0,,mutex,", process_->pid, account_->address);
    EXPECT_NE(csv.find(account), std::string::npos) << table << ":\n" << csv;
    const std::string cache = fmt::format("\r\n{},{},0x{:x},0,,mutex,", process_->pid,
                                          csv_field(cache_->name), cache_->address);
    EXPECT_NE(csv.find(cache), std::string::npos) << table << ":\n" << csv;
  }
}

// The rows `sql` gives in the report's database, each "a|b|c".
std::vector<std::string> sqlite_rows(const std::string& db, const std::string& sql) {
  const CommandResult run = run_command({"/usr/bin/sqlite3", "-batch", "-bail", db, sql});
  EXPECT_EQ(run.exit_status, 0) << "sqlite3 (Debian's sqlite3): " << run.err;
  std::vector<std::string> rows;
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  return rows;
}

TEST_F(LockNamesFormats, SqliteLocksHaveNamesAndTheFindingsTableNamesTheVerdictsLock) {
  const TemporaryDirectory out;
  const CommandResult run = run_lockscope({"report", dir_->path(), "-o", out / "x.db"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  const std::string db = out / "x.db";
  EXPECT_EQ(sqlite_rows(db, fmt::format("SELECT name, name_source FROM locks WHERE address = {}",
                                        account_->address)),
            std::vector<std::string>{"account_a|symbol"});
  EXPECT_EQ(sqlite_rows(db, fmt::format("SELECT name, name_source, first_use_label FROM locks "
                                        "WHERE address = {}",
                                        cache_->address)),
            std::vector<std::string>{cache_->name + "|caller|" + cache_->first_use_site.label});
  const std::vector<std::string> findings = sqlite_rows(
      db,
      "SELECT f.finding_id, f.rule, f.lock_name, l.address FROM findings f JOIN locks l "
      "USING (lock_id) ORDER BY finding_id");
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0], fmt::format("1|verdict|{}|{}", cache_->name, cache_->address));
  EXPECT_EQ(sqlite_rows(db,
                        "SELECT value FROM finding_evidence WHERE finding_id = 1 AND "
                        "key = 'top_lock_wait_ns'"),
            std::vector<std::string>{fmt::format("{}.0", cache_->wait_sum_ns)});
}

CommandResult go_pprof(const std::vector<std::string>& args) {
  std::vector<std::string> command = {"/usr/bin/env", "go", "tool", "pprof"};
  command.insert(command.end(), args.begin(), args.end());
  CommandResult run = run_command(command);
  EXPECT_EQ(run.exit_status, 0) << "go tool pprof (Debian's golang-go, which "
                                   "scripts/install-dependencies.sh installs): "
                                << run.err;
  return run;
}

TEST_F(LockNamesFormats, PprofLabelsSamplesWithTheLockNameThatTagfocusSelects) {
  const TemporaryDirectory out;
  const CommandResult run = run_lockscope({"report", dir_->path(), "-o", out / "w.pb.gz"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  const CommandResult raw = go_pprof({"-raw", out / "w.pb.gz"});
  EXPECT_NE(raw.out.find("lock:[account_a]"), std::string::npos) << raw.out;
  EXPECT_NE(raw.out.find("lock:[" + cache_->name + "]"), std::string::npos) << raw.out;
  EXPECT_NE(raw.out.find(fmt::format("lock_address:[0x{:x}]", account_->address)),
            std::string::npos);
  // One lock's samples, selected by its name: its wait alone, of both locks' total.
  const CommandResult focused = go_pprof(
      {"-top", "-sample_index=delay", "-unit=ns", "-tagfocus=lock=^account_a$", out / "w.pb.gz"});
  EXPECT_NE(
      focused.out.find(fmt::format("Showing nodes accounting for {}ns, ", account_->wait_sum_ns)),
      std::string::npos)
      << focused.out;
  EXPECT_NE(
      focused.out.find(fmt::format("of {}ns total", account_->wait_sum_ns + cache_->wait_sum_ns)),
      std::string::npos)
      << focused.out;
}

TEST_F(LockNamesFormats, CollapsedLeavesAreTheLocksByName) {
  const std::string folded = report({"-f", "collapsed"});
  EXPECT_NE(folded.find(fmt::format(";mutex account_a {}\n", account_->wait_sum_ns)),
            std::string::npos)
      << folded;
  EXPECT_NE(folded.find(";mutex " + cache_->name + " "), std::string::npos) << folded;
}

TEST_F(LockNamesFormats, SarifResultsAreTheFindingsWithTheirLocksByName) {
  const json log = json::parse(report({"-f", "sarif"}));
  EXPECT_EQ(log["version"], "2.1.0");
  const json& run = log["runs"][0];
  EXPECT_EQ(run["tool"]["driver"]["name"], "lockscope");
  EXPECT_EQ(run["tool"]["driver"]["rules"][0]["id"], "verdict");
  const json& verdict = run["results"][0];
  EXPECT_EQ(verdict["ruleId"], "verdict");
  EXPECT_EQ(verdict["ruleIndex"], 0);
  EXPECT_FALSE(verdict.contains("locations"));  // the verdict is about no source line
  EXPECT_EQ(verdict["properties"]["locks"][0]["name"], cache_->name);
  EXPECT_EQ(verdict["properties"]["locks"][0]["name_source"], "caller");
  EXPECT_EQ(verdict["properties"]["time_at_stake_ns"],
            json::parse(report({"-f", "json"}))["findings"][0]["time_at_stake_ns"]);
}

}  // namespace
}  // namespace lockscope::testing
