// The diff's model on hand-made sets of runs: matching by name, the gate's rule and its parsing,
// findings that came and went.
#include "analysis/compare/run_comparison.h"

#include <gtest/gtest.h>

#include <cmath>

namespace lockscope::compare {
namespace {

// A set of `values.size()` runs with one lock "app/cache" whose wait is values[i] in run i, and
// the program's and process's wait the same.
RunMetrics set_with_wait(const std::vector<double>& values, const std::string& lock = "cache") {
  RunMetrics set;
  for (std::size_t i = 0; i < values.size(); ++i) set.runs.push_back("run" + std::to_string(i));
  auto entity = [&](EntityKind kind, std::string key, std::string process, std::string name) {
    EntityRuns e;
    e.kind = kind;
    e.key = std::move(key);
    e.process = std::move(process);
    e.lock = std::move(name);
    for (Metric metric : kMetrics)
      e.values[static_cast<std::size_t>(metric)].assign(values.size(), 100.0);
    e.values[static_cast<std::size_t>(Metric::kWaitNs)] = values;
    e.present.assign(values.size(), true);
    return e;
  };
  set.entities.push_back(entity(EntityKind::kProgram, "", "", ""));
  set.entities.push_back(entity(EntityKind::kProcess, "app", "app", ""));
  set.entities.push_back(entity(EntityKind::kLock, "app/" + lock, "app", lock));
  return set;
}

std::vector<double> scaled(std::vector<double> values, double factor) {
  for (double& v : values) v *= factor;
  return values;
}

const std::vector<double> kTenMs = {10.0e6, 10.4e6, 9.7e6, 10.2e6, 9.9e6,
                                    10.1e6, 10.3e6, 9.8e6, 10.0e6, 10.2e6};

TEST(RunComparison, AWaitThatDoublesIsARegressionOfEveryLevel) {
  const RunMetrics base = set_with_wait(kTenMs), changed = set_with_wait(scaled(kTenMs, 2));
  const Comparison diff = compare_runs(base, changed, {default_gate_rule()});
  ASSERT_EQ(diff.matched.size(), 3u);
  EXPECT_TRUE(diff.tested);
  EXPECT_EQ(diff.matched[0].of(Metric::kWaitNs).direction, Direction::kHigher);
  EXPECT_EQ(diff.matched[0].of(Metric::kAcquisitions).direction, Direction::kSame);
  EXPECT_NEAR(diff.matched[0].of(Metric::kWaitNs).change(), 1.0, 1e-9);
  EXPECT_EQ(diff.regressions.size(), 2u);  // the program and the lock (one process: the program)
  // And back: an improvement, no regression.
  const Comparison back = compare_runs(changed, base, {default_gate_rule()});
  EXPECT_EQ(back.matched[2].of(Metric::kWaitNs).direction, Direction::kLower);
  EXPECT_TRUE(back.regressions.empty());
}

TEST(RunComparison, AGrowthUnderTheThresholdsIsNoRegressionThoughSignificant) {
  // +5 %: significant (every new run above every base run) but under the default +10 %.
  const RunMetrics base = set_with_wait(kTenMs), changed = set_with_wait(scaled(kTenMs, 1.05));
  Comparison diff = compare_runs(base, changed, {default_gate_rule()});
  EXPECT_EQ(diff.matched[0].of(Metric::kWaitNs).direction, Direction::kHigher);
  EXPECT_TRUE(diff.regressions.empty());
  // The interval of the ratio starts above 1.01 (the runs spread ±4 %, so not above 1.03): +5 %
  // of 10 ms is 0.5 ms, so a rule of +1 % and 0.4 ms fails it, one of +1 % and 0.6 ms does not,
  // and one of +3 % fails on the interval.
  const RatioEstimate& ratio = *diff.matched[0].of(Metric::kWaitNs).ratio;
  EXPECT_GT(ratio.low, 1.01);
  EXPECT_LT(ratio.low, 1.03);
  diff = compare_runs(base, changed, {parse_gate_rule("wait:+1%:0.4ms")});
  EXPECT_EQ(diff.regressions.size(), 2u);
  diff = compare_runs(base, changed, {parse_gate_rule("wait:+3%:0.4ms")});
  EXPECT_TRUE(diff.regressions.empty());
  diff = compare_runs(base, changed, {parse_gate_rule("wait:+1%:0.6ms")});
  EXPECT_TRUE(diff.regressions.empty());
}

TEST(RunComparison, FewerThanFiveRunsASideAreNotTestedAndCannotFail) {
  const std::vector<double> four(kTenMs.begin(), kTenMs.begin() + 4);
  const RunMetrics base = set_with_wait(four), changed = set_with_wait(scaled(four, 3));
  const Comparison diff = compare_runs(base, changed, {default_gate_rule()});
  EXPECT_FALSE(diff.tested);
  EXPECT_EQ(diff.matched[0].of(Metric::kWaitNs).direction, Direction::kTooFewRuns);
  EXPECT_TRUE(diff.regressions.empty());
  ASSERT_TRUE(diff.matched[0].of(Metric::kWaitNs).ratio.has_value());
  EXPECT_NEAR(diff.matched[0].of(Metric::kWaitNs).ratio->ratio, 3.0, 1e-9);
}

TEST(RunComparison, LocksAreMatchedByNameAndTheRestIsNewOrGone) {
  // The comparison points into its sets: they must outlive it.
  const RunMetrics base = set_with_wait(kTenMs, "cache"),
                   changed = set_with_wait(kTenMs, "cache_shard");
  const Comparison diff = compare_runs(base, changed, {});
  ASSERT_EQ(diff.matched.size(), 2u);  // the program and the process
  ASSERT_EQ(diff.gone.size(), 1u);
  EXPECT_EQ(diff.gone[0]->key, "app/cache");
  ASSERT_EQ(diff.added.size(), 1u);
  EXPECT_EQ(diff.added[0]->key, "app/cache_shard");
}

TEST(RunComparison, AFindingInMostRunsOfOneSideOnlyCameOrWent) {
  RunMetrics base = set_with_wait(kTenMs), changed = set_with_wait(kTenMs);
  FindingRuns hot{"hot-lock app/cache", "hot-lock", "cache: hot", {}};
  hot.present = {true, true, true, true, true, true, false, false, false, false};  // 6/10
  base.findings.push_back(hot);
  hot.present = {true, false, false, false, true, false, false, false, false, false};  // 2/10
  changed.findings.push_back(hot);
  const Comparison diff = compare_runs(base, changed, {});
  EXPECT_TRUE(diff.findings_appeared.empty());
  ASSERT_EQ(diff.findings_gone.size(), 1u);
  EXPECT_EQ(diff.findings_gone[0].base_runs, 6u);
  EXPECT_EQ(diff.findings_gone[0].changed_runs, 2u);
}

TEST(RunComparison, GateRulesParseWithTheirUnitsAndRefuseNonsense) {
  GateRule rule = parse_gate_rule("wait:+5%:0.5ms");
  EXPECT_EQ(rule.metric, Metric::kWaitNs);
  EXPECT_DOUBLE_EQ(rule.min_growth, 0.05);
  EXPECT_DOUBLE_EQ(rule.min_absolute, 0.5e6);
  rule = parse_gate_rule("contended:+20%");
  EXPECT_EQ(rule.metric, Metric::kContended);
  EXPECT_DOUBLE_EQ(rule.min_growth, 0.20);
  EXPECT_DOUBLE_EQ(rule.min_absolute, 0);
  rule = parse_gate_rule("hold::250us");
  EXPECT_DOUBLE_EQ(rule.min_growth, 0.10);
  EXPECT_DOUBLE_EQ(rule.min_absolute, 250e3);
  EXPECT_DOUBLE_EQ(parse_gate_rule("acquisitions:10%:100").min_absolute, 100);
  for (const char* bad : {"latency", "wait:5", "wait:+5%:3parsecs", "contended:+5%:2ms", "wait:+x%",
                          "wait:+5%:1ms:extra", "wait:-5%", ""})
    EXPECT_THROW(parse_gate_rule(bad), std::invalid_argument) << bad;
}

TEST(RunComparison, SpreadIsTheMedianAndRangeOfTheNumbersOnly) {
  const Spread s = spread_of({3, NAN, 1, 2, 10});
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_EQ(spread_of({NAN}).count, 0u);
}

}  // namespace
}  // namespace lockscope::compare
