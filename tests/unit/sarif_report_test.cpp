// The sarif writer's shape over findings made here: the log, its tool's rules (every row of the
// rule table), and a result per finding with its rule, level, message, source lines (the first
// as its location, the others related; a site without a line left out) and its locks by name.
// Real logs are checked by Microsoft's validator in validate_sarif_report.py.
#include "report/sarif_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/diagnosis/rule_table.h"
#include "code_locations.h"
#include "one_mutex_profile.h"
#include "report/report_writer.h"

namespace lockscope {
namespace {

using nlohmann::json;

Profile named_profile() {
  Profile profile = one_mutex_profile(code_location("transfer", "/src/bank.c", 40),
                                      code_location("main", "/src/main.c", 9));
  LockSummary& lock = profile.processes[0].locks[0];
  lock.name = "account_a";
  lock.name_source = LockNameSource::kSymbol;
  return profile;
}

Finding located_finding() {
  Finding finding;
  finding.rule = "lock-order-inversion";
  finding.severity = Severity::kError;
  finding.title = "account_a and account_b are taken in both orders";
  finding.locks = {FindingLock{0, 0}};
  CodeLocation unresolved;  // a module and offset only: no source line to point at
  unresolved.module = 0;
  unresolved.offset = 0x77;
  unresolved.label = "bank+0x77";
  finding.sites = {code_location("transfer", "/src/my bank.c", 40), unresolved,
                   code_location("refund", "src/refund.c", 12)};
  finding.evidence = {{"edges", 2, "2 orders"}};
  finding.advice = "take the two in one order";
  finding.time_at_stake_ns = 0;
  return finding;
}

json sarif_of(const Profile& profile, const std::vector<Finding>& findings) {
  const ProfileViews views(profile);
  std::ostringstream out;
  write_sarif_log(views, findings, out);
  return json::parse(out.str());
}

TEST(SarifReport, TheFormatTableListsItWithItsExtension) {
  const ReportFormat* format = find_report_format("sarif");
  ASSERT_NE(format, nullptr);
  EXPECT_EQ(format->extensions, std::vector<std::string>{".sarif"});
  EXPECT_EQ(format_for_path("out/lockscope.sarif"), "sarif");
}

TEST(SarifReport, OneRunWhoseToolListsEveryRule) {
  const json log = sarif_of(named_profile(), {});
  EXPECT_EQ(log["version"], "2.1.0");
  EXPECT_EQ(log["$schema"], "https://json.schemastore.org/sarif-2.1.0.json");
  ASSERT_EQ(log["runs"].size(), 1u);
  const json& driver = log["runs"][0]["tool"]["driver"];
  EXPECT_EQ(driver["name"], "lockscope");
  const std::vector<Rule>& rules = rule_table();
  ASSERT_EQ(driver["rules"].size(), rules.size());
  for (size_t i = 0; i < rules.size(); ++i) {
    const json& rule = driver["rules"][i];
    EXPECT_EQ(rule["id"], rules[i].id);
    EXPECT_EQ(rule["shortDescription"]["text"], rules[i].title);
    EXPECT_EQ(rule["fullDescription"]["text"], rules[i].detects);
    const std::string help = rule["help"]["text"];
    EXPECT_TRUE(help.starts_with(std::string(rules[i].advice))) << help;
    EXPECT_NE(help.find(std::string(rules[i].thresholds)), std::string::npos) << help;
  }
  EXPECT_TRUE(log["runs"][0]["results"].empty());
  EXPECT_EQ(log["runs"][0]["properties"]["directory"], "prof");
}

TEST(SarifReport, AFindingIsAResultAtItsSourceLinesWithItsLocksByName) {
  const json log = sarif_of(named_profile(), {located_finding()});
  const json& result = log["runs"][0]["results"][0];
  EXPECT_EQ(result["ruleId"], "lock-order-inversion");
  // ruleIndex only for a rule of the table (the table grows as rules land).
  const std::vector<Rule>& rules = rule_table();
  if (const Rule* rule = find_rule("lock-order-inversion"))
    EXPECT_EQ(result["ruleIndex"], size_t(rule - rules.data()));
  else
    EXPECT_FALSE(result.contains("ruleIndex"));
  EXPECT_EQ(result["level"], "error");
  EXPECT_EQ(result["message"]["text"],
            "account_a and account_b are taken in both orders. take the two in one order");
  ASSERT_EQ(result["locations"].size(), 1u);
  const json& first = result["locations"][0]["physicalLocation"];
  EXPECT_EQ(first["artifactLocation"]["uri"], "file:///src/my%20bank.c");
  EXPECT_EQ(first["region"]["startLine"], 40);
  EXPECT_EQ(result["locations"][0]["message"]["text"], "transfer /src/my bank.c:40");
  // The site without a line is left out; the third is related, by its relative path.
  ASSERT_EQ(result["relatedLocations"].size(), 1u);
  const json& related = result["relatedLocations"][0];
  EXPECT_EQ(related["id"], 1);
  EXPECT_EQ(related["physicalLocation"]["artifactLocation"]["uri"], "src/refund.c");
  EXPECT_EQ(related["physicalLocation"]["region"]["startLine"], 12);
  const json& lock = result["properties"]["locks"][0];
  EXPECT_EQ(lock["name"], "account_a");
  EXPECT_EQ(lock["name_source"], "symbol");
  EXPECT_EQ(lock["address"], 0xfeed);
  EXPECT_EQ(lock["pid"], 7);
  EXPECT_EQ(result["properties"]["evidence"][0]["key"], "edges");
  EXPECT_EQ(result["properties"]["evidence"][0]["value"], 2);
  EXPECT_EQ(result["properties"]["time_at_stake_ns"], 0);
}

TEST(SarifReport, TheWriterWritesTheViewsFindingsTheVerdictWithoutALocation) {
  const Profile profile = named_profile();
  std::ostringstream out;
  make_report_writer("sarif")->write(profile, ReportOptions{}, out);
  const json log = json::parse(out.str());
  const ProfileViews views(profile);
  const json& results = log["runs"][0]["results"];
  ASSERT_EQ(results.size(), views.findings().size());
  EXPECT_EQ(results[0]["ruleId"], "verdict");
  EXPECT_EQ(results[0]["ruleIndex"], 0);
  EXPECT_EQ(results[0]["level"], severity_name(views.findings()[0].severity));
  EXPECT_FALSE(results[0].contains("locations"));
  EXPECT_EQ(results[0]["message"]["text"], views.findings()[0].title);  // no advice: the title
  EXPECT_EQ(results[0]["properties"]["locks"][0]["name"], "account_a");
  EXPECT_EQ(results[0]["properties"]["time_at_stake_ns"], views.findings()[0].time_at_stake_ns);
}

TEST(SarifReport, UrisArePercentEncodedFileUrisOrRelativeReferences) {
  EXPECT_EQ(sarif_uri("/usr/src/a b/c#d.c"), "file:///usr/src/a%20b/c%23d.c");
  EXPECT_EQ(sarif_uri("src/x-y_z.~c"), "src/x-y_z.~c");
  EXPECT_EQ(sarif_uri("C:/x.c"), "C%3A/x.c");  // not a scheme
  EXPECT_EQ(sarif_uri("caf\xc3\xa9.c"), "caf%C3%A9.c");
}

}  // namespace
}  // namespace lockscope
