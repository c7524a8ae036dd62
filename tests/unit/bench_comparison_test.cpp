// `lockscope diff` of two lab results on hand-written lockscope-bench/1 documents with known
// per-run values: reading each scenario's runs, matching cases (one lock against another
// included), each figure's test in its better direction, the gate and its --fail-on rules.
#include "analysis/compare/bench_comparison.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace lockscope::compare {
namespace {

using nlohmann::json;

// Mann-Whitney U, two-sided, exact, of two samples of 5 with every value of one above every value
// of the other: 2 / C(10, 5) = 2 / 252. scipy.stats.mannwhitneyu([100, 101, 102, 103, 104],
// [80, 81, 82, 83, 84], method="exact") gives p = 0.007936507936507936.
constexpr double kSeparatedFiveAndFiveP = 0.007936507936507936;

const std::vector<double> kBase = {100, 101, 102, 103, 104};
const std::vector<double> kTwentyPercentLower = {80, 81, 82, 83, 84};

json machine(const std::string& kernel = "6.1.0-13-amd64") {
  return {{"cpu_model", "Intel Xeon"}, {"online_cpus", 2},      {"allowed_cpus", 2},
          {"hypervisor", true},        {"kernel", kernel},      {"architecture", "x86_64"},
          {"glibc", "2.36"},           {"compiler", "g++ 12"},  {"build", "optimised (NDEBUG)"},
          {"timestamp_utc", "x"},      {"load_average_1m", 0.5}};
}

// A mutex case whose runs have these iterations/ms (and, with 2+ threads, handoffs/s and fairness
// constant across runs).
json mutex_case(const std::string& lock, int threads, const std::vector<double>& per_ms) {
  json runs = json::array();
  for (double v : per_ms)
    runs.push_back({{"elapsed_s", 0.05},
                    {"acquisitions", v * 50},
                    {"iterations_per_ms", v},
                    {"handoffs_per_s", 1000.0},
                    {"fairness_min_over_max", 0.5}});
  return {{"lock", lock}, {"threads", threads}, {"runs", runs}};
}

json mutex_section(const json& cases, double duration_s = 0.05) {
  return {{"parameters",
           {{"locks", json::array()},
            {"threads", json::array()},
            {"duration_s", duration_s},
            {"cs_work", 0},
            {"runs", 5}}},
          {"cases", cases}};
}

std::string document(const json& scenarios, const json& on = machine()) {
  return json{{"schema", "lockscope-bench/1"},
              {"command", "lockscope bench …"},
              {"machine", on},
              {"scenarios", scenarios}}
      .dump();
}

// (A vector, not a json: `json{one_object}` is that object, not an array of it.)
BenchResults mutex_results(const std::string& path, const std::vector<json>& cases) {
  return parse_bench_results(document({{"mutex", mutex_section(cases)}}), path);
}

const BenchFigureChange& figure_of(const BenchCaseChange& c, const std::string& name) {
  for (const BenchFigureChange& f : c.figures)
    if (f.base->kind->name == name) return f;
  throw std::out_of_range(name);
}

TEST(BenchComparison, AThroughputTwentyPercentLowerInEveryRunIsWorseAndARegression) {
  const BenchResults base = mutex_results("a.json", {mutex_case("pthread", 1, kBase)});
  const BenchResults changed =
      mutex_results("b.json", {mutex_case("pthread", 1, kTwentyPercentLower)});
  const BenchComparison diff = compare_bench(base, changed, {default_bench_gate_rule()});
  ASSERT_EQ(diff.matched.size(), 1u);
  // One thread: no handoff and a fairness of 1 by construction, so iterations/ms only.
  ASSERT_EQ(diff.matched[0].figures.size(), 1u);
  const BenchFigureChange& f = diff.matched[0].figures[0];
  EXPECT_EQ(f.verdict, BenchVerdict::kWorse);
  ASSERT_TRUE(f.test.has_value());
  EXPECT_TRUE(f.test->exact);
  EXPECT_NEAR(f.test->p_value, kSeparatedFiveAndFiveP, 1e-12);
  EXPECT_NEAR(f.change(), 82.0 / 102.0 - 1, 1e-12);
  EXPECT_LT(f.ratio->high, 0.9);
  EXPECT_TRUE(diff.tested);
  ASSERT_EQ(diff.regressions.size(), 1u);
  EXPECT_TRUE(diff.warnings.empty());

  // The other way round: better, and the gate passes.
  const BenchComparison back = compare_bench(changed, base, {default_bench_gate_rule()});
  EXPECT_EQ(back.matched[0].figures[0].verdict, BenchVerdict::kBetter);
  EXPECT_NEAR(back.matched[0].figures[0].test->p_value, kSeparatedFiveAndFiveP, 1e-12);
  EXPECT_TRUE(back.regressions.empty());
}

TEST(BenchComparison, TheSameRunsOnBothSidesAreNotSignificant) {
  const BenchResults base = mutex_results("a.json", {mutex_case("pthread", 2, kBase)});
  const BenchComparison diff = compare_bench(base, base, {default_bench_gate_rule()});
  ASSERT_EQ(diff.matched.size(), 1u);
  ASSERT_EQ(diff.matched[0].figures.size(), 3u);  // iterations/ms, handoffs/s, fairness
  for (const BenchFigureChange& f : diff.matched[0].figures) {
    EXPECT_EQ(f.verdict, BenchVerdict::kSame) << f.base->kind->name;
    EXPECT_NEAR(f.ratio->ratio, 1.0, 1e-12);
  }
  EXPECT_TRUE(diff.regressions.empty());
}

TEST(BenchComparison, ATimeThatRoseIsWorseAndOneThatFellIsBetter) {
  auto c2c = [](const std::vector<double>& round_trips) {
    return json{{"parameters", {{"runs", 5}, {"round_trips", 1000}}},
                {"pairs", {{{"cpu_a", 0}, {"cpu_b", 1}, {"round_trip_ns", round_trips}}}}};
  };
  const BenchResults fast = parse_bench_results(document({{"c2c", c2c(kTwentyPercentLower)}}), "a");
  const BenchResults slow = parse_bench_results(document({{"c2c", c2c(kBase)}}), "b");
  const BenchComparison worse = compare_bench(fast, slow, {default_bench_gate_rule()});
  ASSERT_EQ(worse.matched.size(), 1u);
  EXPECT_EQ(worse.matched[0].base->detail, "CPU 0 ↔ CPU 1");
  EXPECT_EQ(figure_of(worse.matched[0], "round_trip_ns").verdict, BenchVerdict::kWorse);
  EXPECT_EQ(worse.regressions.size(), 1u);  // +24 %, every pair of runs above +10 %
  const BenchComparison better = compare_bench(slow, fast, {default_bench_gate_rule()});
  EXPECT_EQ(figure_of(better.matched[0], "round_trip_ns").verdict, BenchVerdict::kBetter);
  EXPECT_TRUE(better.regressions.empty());
}

TEST(BenchComparison, OneLockInEachFileIsMatchedByTheOtherFields) {
  const BenchResults pthread = mutex_results("a.json", {mutex_case("pthread", 2, kBase)});
  const BenchResults ticket =
      mutex_results("b.json", {mutex_case("ticket", 2, kTwentyPercentLower)});
  const BenchComparison diff = compare_bench(pthread, ticket, {default_bench_gate_rule()});
  ASSERT_EQ(diff.matched.size(), 1u);
  EXPECT_TRUE(diff.gone.empty());
  EXPECT_TRUE(diff.added.empty());
  EXPECT_EQ(diff.matched[0].base->lock, "pthread");
  EXPECT_EQ(diff.matched[0].changed->lock, "ticket");
  EXPECT_EQ(figure_of(diff.matched[0], "iterations_per_ms").verdict, BenchVerdict::kWorse);
}

TEST(BenchComparison, SeveralLocksAreMatchedLockByLockAndTheRestIsNewOrGone) {
  const BenchResults base =
      mutex_results("a.json", {mutex_case("pthread", 2, kBase), mutex_case("ticket", 2, kBase),
                               mutex_case("ticket", 4, kBase)});
  const BenchResults changed =
      mutex_results("b.json", {mutex_case("ticket", 2, kTwentyPercentLower),
                               mutex_case("mcs", 2, kBase), mutex_case("pthread", 2, kBase)});
  const BenchComparison diff = compare_bench(base, changed, {default_bench_gate_rule()});
  ASSERT_EQ(diff.matched.size(), 2u);
  EXPECT_EQ(diff.matched[0].changed->lock, "pthread");
  EXPECT_EQ(figure_of(diff.matched[0], "iterations_per_ms").verdict, BenchVerdict::kSame);
  EXPECT_EQ(diff.matched[1].changed->lock, "ticket");
  EXPECT_EQ(figure_of(diff.matched[1], "iterations_per_ms").verdict, BenchVerdict::kWorse);
  ASSERT_EQ(diff.gone.size(), 1u);
  EXPECT_EQ(diff.gone[0]->detail, "4 threads");
  ASSERT_EQ(diff.added.size(), 1u);
  EXPECT_EQ(diff.added[0]->lock, "mcs");
}

TEST(BenchComparison, AnotherMachineAndOtherParametersAreWarnedOf) {
  const json cases = json::array({mutex_case("pthread", 1, kBase)});
  const BenchResults base =
      parse_bench_results(document({{"mutex", mutex_section(cases, 0.05)}}), "a.json");
  const BenchResults changed = parse_bench_results(
      document({{"mutex", mutex_section(cases, 0.1)}}, machine("6.5.0-1-amd64")), "b.json");
  const BenchComparison diff = compare_bench(base, changed, {default_bench_gate_rule()});
  EXPECT_EQ(diff.warnings,
            (std::vector<std::string>{"not the same machine: kernel 6.1.0-13-amd64 → 6.5.0-1-amd64",
                                      "mutex not run the same way: duration_s 0.05 → 0.1"}));
}

TEST(BenchComparison, FewerThanFiveRunsAreNotTestedAndCannotRegress) {
  const BenchResults base = mutex_results("a.json", {mutex_case("pthread", 1, {100, 101, 102})});
  const BenchResults changed = mutex_results("b.json", {mutex_case("pthread", 1, {50, 51, 52})});
  const BenchComparison diff = compare_bench(base, changed, {default_bench_gate_rule()});
  EXPECT_EQ(diff.matched[0].figures[0].verdict, BenchVerdict::kTooFewRuns);
  EXPECT_FALSE(diff.tested);
  EXPECT_TRUE(diff.regressions.empty());
}

TEST(BenchComparison, ACaseWithoutPerRunValuesIsSaidSoNotInvented) {
  json summary_only = {{"lock", "pthread"},
                       {"threads", 1},
                       {"iterations_per_ms", {{"count", 5}, {"median", 100.0}}}};
  const BenchResults base = mutex_results("a.json", {summary_only});
  const BenchResults changed = mutex_results("b.json", {mutex_case("pthread", 1, kBase)});
  const BenchComparison diff = compare_bench(base, changed, {default_bench_gate_rule()});
  ASSERT_EQ(diff.matched.size(), 1u);
  EXPECT_EQ(diff.matched[0].figures[0].verdict, BenchVerdict::kNoValue);
  EXPECT_STREQ(bench_verdict_name(BenchVerdict::kNoValue), "no per-run values");
  EXPECT_FALSE(diff.tested);
}

TEST(BenchComparison, EveryScenarioKeepsItsRunsWhereTheLabWritesThem) {
  const json scenarios = {
      {"condvar",
       {{"parameters", {{"runs", 2}, {"iterations", 100}}},
        {"fifo", {{"requested", false}, {"applied", false}, {"error", ""}}},
        {"runs", {{{"elapsed_s", 0.1}, {"cycles_per_s", 1000.0}}, {{"cycles_per_s", 1200.0}}}}}},
      {"storm",
       {{"parameters", {{"threads", 4}, {"runs", 1}}},
        {"variants",
         {{"processes",
           {{"runs",
             {{{"real_s", 0.5}, {"user_s", 0.1}, {"sys_s", 0.3}, {"calls_per_s", 9.0}}}}}}}}}},
      {"pi",
       {{"parameters", {{"runs", 1}}},
        {"skipped", true},
        {"reason", "SCHED_FIFO not permitted here (Operation not permitted)"}}},
      {"key_figures", {{"c2c_round_trip_ns", 80.0}}}};
  const BenchResults results = parse_bench_results(document(scenarios), "all.json");
  ASSERT_EQ(results.cases.size(), 2u);
  EXPECT_EQ(results.cases[0].scenario, "condvar");
  EXPECT_EQ(results.cases[0].figure("cycles_per_s")->values, (std::vector<double>{1000, 1200}));
  EXPECT_EQ(results.cases[1].detail, "processes");
  EXPECT_EQ(results.cases[1].figure("sys_s")->values, std::vector<double>{0.3});
  EXPECT_EQ(results.cases[1].figure("sys_s")->kind->better, Better::kLower);
  EXPECT_EQ(results.cases[1].figure("calls_per_s"), nullptr);  // calls / real_s: no new test
  EXPECT_EQ(results.skipped,
            std::vector<std::string>{
                "pi skipped: SCHED_FIFO not permitted here (Operation not permitted)"});
}

TEST(BenchComparison, NotALabResultIsAOneLineError) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"schema\": ", "not JSON"},
      {"{\"profile\": 1}", "JSON without \"schema\": \"lockscope-bench/1\""},
      {"{\"schema\": \"lockscope-bench/2\"}", "is a lockscope-bench/2 result"},
      {document({{"mutex", {{"parameters", json::object()}}}}), "not a well-formed bench result"},
  };
  for (const auto& [text, reason] : cases) {
    try {
      parse_bench_results(text, "x.json");
      ADD_FAILURE() << text;
    } catch (const std::invalid_argument& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(reason), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
}

TEST(BenchComparison, FailOnNamesALabFigureAndHowMuchWorse) {
  EXPECT_NEAR(parse_bench_gate_rule("iterations_per_ms:-5%").min_worsening, 0.05, 1e-12);
  EXPECT_NEAR(parse_bench_gate_rule("round_trip_ns:+20%").min_worsening, 0.20, 1e-12);
  EXPECT_NEAR(parse_bench_gate_rule("round_trip_ns:20%").min_worsening, 0.20, 1e-12);
  EXPECT_EQ(parse_bench_gate_rule("any:15%").figure, "");
  EXPECT_EQ(parse_bench_gate_rule("cycles_per_s").figure, "cycles_per_s");
  for (const char* bad : {"iterations_per_ms:+5%", "round_trip_ns:-5%", "wait:+10%",
                          "iterations_per_ms:-5%:1ms", "iterations_per_ms:5", "any:x%"})
    EXPECT_THROW(parse_bench_gate_rule(bad), std::invalid_argument) << bad;

  // 8.8 % lower, every pair of runs at least 6 % apart: past -5 %, not past the default 10 %.
  const BenchResults base = mutex_results("a.json", {mutex_case("pthread", 1, kBase)});
  const BenchResults changed =
      mutex_results("b.json", {mutex_case("pthread", 1, {92, 92.5, 93, 93.5, 94})});
  EXPECT_TRUE(compare_bench(base, changed, {default_bench_gate_rule()}).regressions.empty());
  EXPECT_EQ(compare_bench(base, changed, {parse_bench_gate_rule("iterations_per_ms:-5%")})
                .regressions.size(),
            1u);
  EXPECT_TRUE(compare_bench(base, changed, {parse_bench_gate_rule("handoffs_per_s:-5%")})
                  .regressions.empty());
}

}  // namespace
}  // namespace lockscope::compare
