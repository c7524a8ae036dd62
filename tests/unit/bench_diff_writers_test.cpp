// The writers of a lab diff on a hand-written pair of results: pthread (5 runs at 100–104
// iterations/ms) against ticket (80–84), 2 threads, on two kernels. Each format says the same:
// ticket is worse, by how much, with the test's p, a regression, and the machine warning.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/compare/bench_comparison.h"
#include "report/bench_diff_report.h"

namespace lockscope {
namespace {

using nlohmann::json;

std::string lab_result(const std::string& lock, const std::vector<double>& per_ms,
                       const std::string& kernel) {
  json runs = json::array();
  for (double v : per_ms)
    runs.push_back(
        {{"iterations_per_ms", v}, {"handoffs_per_s", 5000.0}, {"fairness_min_over_max", 0.9}});
  return json{{"schema", "lockscope-bench/1"},
              {"machine", {{"cpu_model", "Xeon"}, {"kernel", kernel}}},
              {"scenarios",
               {{"mutex",
                 {{"parameters", {{"locks", {lock}}, {"threads", {2}}, {"runs", 5}}},
                  {"cases", {{{"lock", lock}, {"threads", 2}, {"runs", runs}}}}}}}}}
      .dump();
}

class BenchDiffWriters : public ::testing::Test {
 protected:
  compare::BenchResults base_ =
      compare::parse_bench_results(lab_result("pthread", {100, 101, 102, 103, 104}, "6.1"), "a");
  compare::BenchResults changed_ =
      compare::parse_bench_results(lab_result("ticket", {80, 81, 82, 83, 84}, "6.5"), "b");
  compare::BenchComparison diff_ =
      compare::compare_bench(base_, changed_, {compare::default_bench_gate_rule()});
  DiffOptions options_{"a.json", "b.json", 10, false};
};

TEST_F(BenchDiffWriters, TextSaysTicketIsSlowerAndFailsTheGate) {
  std::ostringstream out;
  write_bench_diff_text(diff_, options_, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("warning: not the same machine: kernel 6.1 → 6.5\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("Lab figures: 1 worse, 0 better, 2 without significant change (of 3; 5+5 "
                      "runs)"),
            std::string::npos)
      << text;
  // The Hodges-Lehmann ratio is 82/102 (the median pair): 1/0.804 = 1.24× slower.
  EXPECT_NE(text.find("ticket is 1.24× slower than pthread (iterations_per_ms, mutex 2 threads, "
                      "p=0.008)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Gate: FAILED: 1 regression (any:10%)"), std::string::npos) << text;
  EXPECT_NE(text.find("iterations_per_ms ↑"), std::string::npos) << text;
  EXPECT_NE(text.find("−19.6 %"), std::string::npos) << text;  // medians 102 → 82
  EXPECT_NE(text.find("worse, p=0.008"), std::string::npos) << text;
}

TEST_F(BenchDiffWriters, MarkdownOpensWithTheRegressionAndListsEveryRange) {
  std::ostringstream out;
  write_bench_diff_markdown(diff_, options_, out);
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("### lockscope diff of lab results: regression\n", 0), 0u) << text;
  EXPECT_NE(text.find("> **Warning:** not the same machine"), std::string::npos) << text;
  EXPECT_NE(text.find("| :x: | mutex pthread → ticket, 2 threads | iterations_per_ms ↑ | 5+5 | "
                      "102/ms [100–104] | 82.0/ms [80.0–84.0] | −19.6 %"),
            std::string::npos)
      << text;
}

TEST_F(BenchDiffWriters, JsonHoldsEveryRunAndTheTest) {
  std::ostringstream out;
  write_bench_diff_json(diff_, options_, out);
  const json doc = json::parse(out.str());
  EXPECT_EQ(doc["kind"], "bench");
  EXPECT_FALSE(doc["gate"]["passed"].get<bool>());
  ASSERT_EQ(doc["gate"]["regressions"].size(), 1u);
  EXPECT_EQ(doc["gate"]["regressions"][0]["figure"], "iterations_per_ms");
  const json& figure = doc["matched"][0]["figures"]["iterations_per_ms"];
  EXPECT_EQ(figure["better"], "higher");
  EXPECT_EQ(figure["verdict"], "worse");
  EXPECT_EQ(figure["base"]["values"], json({100, 101, 102, 103, 104}));
  EXPECT_EQ(figure["new"]["values"], json({80, 81, 82, 83, 84}));
  EXPECT_NEAR(figure["test"]["p_value"].get<double>(), 2.0 / 252, 1e-12);
  EXPECT_EQ(doc["matched"][0]["base_lock"], "pthread");
  EXPECT_EQ(doc["matched"][0]["new_lock"], "ticket");
  EXPECT_EQ(doc["warnings"].size(), 1u);
  EXPECT_EQ(doc["base"]["machine"]["kernel"], "6.1");
}

}  // namespace
}  // namespace lockscope
