// The lab's scenario arithmetic and output helpers, without running any threads.
#include <gtest/gtest.h>
#include <sys/syscall.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "bench/all_scenario.h"
#include "bench/bench_output.h"
#include "bench/c2c_scenario.h"
#include "bench/condvar_scenario.h"
#include "bench/mutex_scenario.h"
#include "bench/pi_scenario.h"
#include "bench/storm_scenario.h"

namespace lockscope::lab {
namespace {

TEST(BenchArithmeticTest, MutexRatesAndFairness) {
  EXPECT_DOUBLE_EQ(iterations_per_ms(2000, 0.5), 4.0);  // 2000 acquisitions in 500 ms
  EXPECT_DOUBLE_EQ(iterations_per_ms(10, 0), 0.0);
  EXPECT_DOUBLE_EQ(handoffs_per_second(300, 1.5), 200.0);
  EXPECT_DOUBLE_EQ(fairness_min_over_max({50, 100, 75}), 0.5);
  EXPECT_DOUBLE_EQ(fairness_min_over_max({}), 1.0);
  EXPECT_DOUBLE_EQ(jain_fairness_index({10, 10, 10, 10}), 1.0);
  EXPECT_DOUBLE_EQ(jain_fairness_index({40, 0, 0, 0}), 0.25);  // one thread got everything: 1/n
}

TEST(BenchArithmeticTest, C2cBoundIsTwoHandoffsPerRoundTrip) {
  EXPECT_DOUBLE_EQ(round_trip_ns(1'000'000, 10'000), 100.0);
  EXPECT_DOUBLE_EQ(handoff_bound_per_second(100.0), 2e7);  // 50 ns one-way
  // 5 M handoffs/s against a 100 ns round trip (bound 20 M/s) is a quarter of the bound.
  EXPECT_DOUBLE_EQ(fraction_of_bound(5e6, 100.0), 0.25);
}

TEST(BenchArithmeticTest, CondvarStormAndPiFigures) {
  EXPECT_DOUBLE_EQ(cycles_per_second(270'000, 1.0), 270'000.0);
  EXPECT_DOUBLE_EQ(cycles_per_second(1, 0), 0.0);
  EXPECT_DOUBLE_EQ(calls_per_second(256, 10'000, 2.0), 1'280'000.0);
  PiOptions pi;
  pi.hold_ms = 20;
  pi.hog_ms = 100;
  EXPECT_DOUBLE_EQ(expected_high_blocked_ms(pi, true), 20.0);
  EXPECT_DOUBLE_EQ(expected_high_blocked_ms(pi, false), 120.0);
}

TEST(BenchArithmeticTest, StormSyscallTable) {
  // Every name maps to the kernel's own number for it (asm/unistd.h), not merely to a number.
  EXPECT_EQ(storm_syscall_number("getpid"), SYS_getpid);
  EXPECT_EQ(storm_syscall_number("gettid"), SYS_gettid);
  EXPECT_EQ(storm_syscall_number("getppid"), SYS_getppid);
  EXPECT_EQ(storm_syscall_number("getuid"), SYS_getuid);
  EXPECT_EQ(storm_syscall_number("sched_yield"), SYS_sched_yield);
  EXPECT_EQ(storm_syscall_number("fork"), -1);
  EXPECT_EQ(storm_syscall_names().front(), "getpid");
}

TEST(BenchArithmeticTest, VerifyMutualExclusionCatchesALostUpdate) {
  MutexRun run;
  run.per_thread = {500, 500};
  run.counter = 1000;
  EXPECT_NO_THROW(verify_mutual_exclusion(run, "ok"));
  run.counter = 998;  // two increments lost: two threads were inside at once
  EXPECT_THROW(verify_mutual_exclusion(run, "broken"), std::runtime_error);
}

TEST(BenchArithmeticTest, FiguresKeepThreeSignificantDigits) {
  EXPECT_EQ(format_figure(1'234'567), "1.23 M");
  EXPECT_EQ(format_figure(98'500), "98.5 k");
  EXPECT_EQ(format_figure(512.34), "512.3");
  EXPECT_EQ(format_figure(0.5), "0.500");
  EXPECT_EQ(format_spread(383, 98'500), "0.4 k");
  EXPECT_EQ(format_spread(12'000, 2'000'000), "0.01 M");
}

TEST(BenchArithmeticTest, KeyFiguresFromCannedScenarioJson) {
  const nlohmann::json scenarios = {
      {"c2c", {{"best_round_trip_ns", 100.0}, {"handoff_bound_per_second", 2e7}}},
      {"mutex",
       {{"best_handoff", {{"lock", "ticket"}, {"fraction_of_bound", 0.6}}},
        {"cases",
         {{{"lock", "pthread"}, {"threads", 2}, {"iterations_per_ms", {{"mean", 30.0}}}},
          {{"lock", "tas"}, {"threads", 2}, {"iterations_per_ms", {{"mean", 99.0}}}}}}}},
      {"condvar", {{"cycles_per_s", {{"median", 270000.0}}}}},
      {"storm",
       {{"variants",
         {{"threads",
           {{"real_s", {{"mean", 1.0}}},
            {"user_s", {{"mean", 0.5}}},
            {"sys_s", {{"mean", 2.0}}}}}}}}},
      {"pi", {{"skipped", true}, {"reason", "SCHED_FIFO not permitted here"}}}};
  const nlohmann::json f = key_figures(scenarios);
  EXPECT_EQ(f.at("c2c_round_trip_ns"), 100.0);
  EXPECT_EQ(f.at("best_handoff").at("lock"), "ticket");
  EXPECT_EQ(f.at("pthread_iterations_per_ms_2_threads"), 30.0);
  EXPECT_FALSE(f.contains("tas_iterations_per_ms_2_threads"));
  EXPECT_EQ(f.at("condvar_cycles_per_s_median"), 270000.0);
  EXPECT_EQ(f.at("storm_threads").at("sys_s"), 2.0);
  EXPECT_EQ(f.at("pi"), "skipped: SCHED_FIFO not permitted here");
}

TEST(BenchOutputTest, RelativeSummaryRanksAndComparesToTheBest) {
  stats::SampleSummary fast, slow;
  fast.count = slow.count = 3;
  fast.mean = 142;
  slow.mean = 100;
  std::ostringstream out;
  const nlohmann::json rel =
      print_relative_summary(out, "2 threads", {{"slow", slow}, {"fast", fast}}, true);
  ASSERT_EQ(rel.size(), 1u);
  EXPECT_EQ(rel[0].at("best"), "fast");
  EXPECT_DOUBLE_EQ(rel[0].at("ratio").get<double>(), 1.42);
  EXPECT_NE(out.str().find("1.42 ± 0.00× faster than slow"), std::string::npos) << out.str();
  // For times, lower is better and the ratio is still ≥ 1.
  const nlohmann::json times =
      print_relative_summary(out, "time", {{"slow", fast}, {"fast", slow}}, false);
  EXPECT_EQ(times[0].at("best"), "fast");
  EXPECT_DOUBLE_EQ(times[0].at("ratio").get<double>(), 1.42);
}

}  // namespace
}  // namespace lockscope::lab
