// Every `lockscope bench` scenario, run in-process with tiny parameters through the real command
// entry point; the `--json` document is parsed and validated with nlohmann-json. Counts are checked
// exactly against the parameters; every summary against the per-run figures it summarises; timing
// figures only against bounds that hold physically on a loaded two-core VM (a lock pair is not
// under a nanosecond, a cache-line round trip not over a millisecond) and that a garbage figure
// (0, negative, NaN, absurd) fails.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/bench_command.h"

namespace lockscope::lab {
namespace {

class LabScenarioTest : public ::testing::Test {
 protected:
  // Runs `lockscope bench ARGS... --json FILE` and returns the parsed document.
  nlohmann::json run_bench(std::vector<std::string> args) {
    const std::string path =
        (std::filesystem::temp_directory_path() /
         ("lockscope_lab_" + std::to_string(::getpid()) + "_" +
          ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".json"))
            .string();
    args.insert(args.begin(), "bench");
    args.push_back("--json");
    args.push_back(path);
    EXPECT_EQ(run_bench_command(args), 0);
    std::ifstream file(path);
    EXPECT_TRUE(file.good()) << path;
    nlohmann::json document = nlohmann::json::parse(file);  // throws (fails the test) if invalid
    std::filesystem::remove(path);
    expect_envelope(document);
    return document;
  }

  static void expect_envelope(const nlohmann::json& document) {
    EXPECT_EQ(document.at("schema"), "lockscope-bench/1");
    EXPECT_TRUE(document.at("command").get<std::string>().starts_with("lockscope bench "));
    const nlohmann::json& machine = document.at("machine");
    for (const char* key : {"cpu_model", "kernel", "glibc", "compiler", "timestamp_utc"}) {
      EXPECT_TRUE(machine.at(key).is_string()) << key;
    }
    EXPECT_GE(machine.at("online_cpus").get<int>(), 1);
    EXPECT_TRUE(document.at("scenarios").is_object());
  }

  // A summary of `runs` per-run figures, checked against those figures: count, min and max exact,
  // the mean to rounding, the median between them.
  static void expect_summary(const nlohmann::json& summary, const nlohmann::json& runs,
                             const char* figure) {
    std::vector<double> values;
    for (const nlohmann::json& run : runs) values.push_back(run.at(figure).get<double>());
    expect_summary_of(summary, values, figure);
  }
  static void expect_summary_of(const nlohmann::json& summary, const std::vector<double>& values,
                                const char* figure) {
    ASSERT_FALSE(values.empty()) << figure;
    EXPECT_EQ(summary.at("count").get<std::size_t>(), values.size()) << figure;
    const double min = summary.at("min"), max = summary.at("max"), mean = summary.at("mean");
    const double median = summary.at("median");
    EXPECT_EQ(min, *std::min_element(values.begin(), values.end())) << figure;
    EXPECT_EQ(max, *std::max_element(values.begin(), values.end())) << figure;
    double sum = 0;
    for (double value : values) sum += value;
    EXPECT_NEAR(mean, sum / static_cast<double>(values.size()), 1e-9 * std::abs(mean)) << figure;
    EXPECT_LE(min, median) << figure;
    EXPECT_LE(median, max) << figure;
    EXPECT_GE(summary.at("stddev").get<double>(), 0.0) << figure;
  }

  // Finite and within [low, high]: NaN fails both comparisons.
  static void expect_within(double value, double low, double high, const std::string& what) {
    EXPECT_TRUE(std::isfinite(value) && value >= low && value <= high)
        << what << " = " << value << ", expected within [" << low << ", " << high << "]";
  }

  // One mutex run's figures: exact counts of a run of `iterations` per thread, rates that agree
  // with its elapsed time, the fairness of equal shares.
  static void expect_mutex_run(const nlohmann::json& run, int threads, std::uint64_t iterations) {
    const std::uint64_t acquisitions = run.at("acquisitions");
    EXPECT_EQ(acquisitions, iterations * static_cast<std::uint64_t>(threads));
    EXPECT_EQ(
        run.at("per_thread_acquisitions"),
        nlohmann::json(std::vector<std::uint64_t>(static_cast<std::size_t>(threads), iterations)));
    // Each thread after the first to run hands the lock over at least once; a handoff is an
    // acquisition, and the first acquisition is none.
    const std::uint64_t handoffs = run.at("handoffs");
    EXPECT_GE(handoffs, static_cast<std::uint64_t>(threads - 1));
    EXPECT_LE(handoffs, acquisitions - 1);
    const double elapsed_s = run.at("elapsed_s");
    expect_within(elapsed_s, 1e-9, 60, "elapsed_s");
    const double per_ms = run.at("iterations_per_ms");
    EXPECT_NEAR(per_ms, static_cast<double>(acquisitions) / (elapsed_s * 1e3), 1e-9 * per_ms);
    EXPECT_EQ(run.at("jain_index").get<double>(), 1.0);  // equal shares: exactly fair
    EXPECT_EQ(run.at("fairness_min_over_max").get<double>(), 1.0);
  }
};

TEST_F(LabScenarioTest, MutexReportsEveryLockAndThreadCount) {
  const nlohmann::json doc =
      run_bench({"mutex", "--locks", "pthread,ticket,mcs", "--threads", "1,2", "--iterations",
                 "500", "--runs", "2", "--cs-work", "3"});
  const nlohmann::json& mutex = doc.at("scenarios").at("mutex");
  EXPECT_EQ(mutex.at("parameters").at("iterations"), 500);
  const nlohmann::json& cases = mutex.at("cases");
  ASSERT_EQ(cases.size(), 6u);  // 3 locks × 2 thread counts
  for (const nlohmann::json& c : cases) {
    const int threads = c.at("threads");
    ASSERT_EQ(c.at("runs").size(), 2u);
    for (const nlohmann::json& run : c.at("runs")) expect_mutex_run(run, threads, 500);
    expect_summary(c.at("iterations_per_ms"), c.at("runs"), "iterations_per_ms");
  }
  EXPECT_TRUE(mutex.at("relative").contains("2"));
}

// One thread: no handoff at all, and an uncontended rate between 10 and 10^6 pairs per ms. A lock
// pair of any kind is at least one atomic read-modify-write (over 1 ns), and 20,000 pairs do not
// take the two seconds a floor of 10 per ms allows, however loaded the machine.
TEST_F(LabScenarioTest, MutexUncontendedHasNoHandoffsAndAPlausibleRate) {
  const nlohmann::json doc =
      run_bench({"mutex", "--threads", "1", "--iterations", "20000", "--runs", "3"});
  const nlohmann::json& cases = doc.at("scenarios").at("mutex").at("cases");
  ASSERT_EQ(cases.size(), 11u);  // every lock of the catalog (LockCatalogTest)
  for (const nlohmann::json& c : cases) {
    const std::string lock = c.at("lock");
    ASSERT_EQ(c.at("runs").size(), 3u) << lock;
    for (const nlohmann::json& run : c.at("runs")) {
      expect_mutex_run(run, 1, 20000);
      EXPECT_EQ(run.at("handoffs").get<std::uint64_t>(), 0u) << lock;
      EXPECT_EQ(run.at("handoffs_per_s").get<double>(), 0.0) << lock;
      expect_within(run.at("iterations_per_ms"), 10, 1e6, lock + " iterations/ms");
    }
  }
}

TEST_F(LabScenarioTest, CondvarCountsCyclesPerRun) {
  const nlohmann::json doc = run_bench({"condvar", "--runs", "3", "--iterations", "200"});
  const nlohmann::json& condvar = doc.at("scenarios").at("condvar");
  EXPECT_EQ(condvar.at("parameters").at("iterations"), 200);
  ASSERT_EQ(condvar.at("runs").size(), 3u);
  for (const nlohmann::json& run : condvar.at("runs")) {
    const double rate = run.at("cycles_per_s"), elapsed_s = run.at("elapsed_s");
    EXPECT_NEAR(rate, 200 / elapsed_s, 1e-9 * rate);
    // A cycle is two wake-ups of the other thread: not 10 ns (a cache-line transfer each way
    // alone is more), not 100 ms.
    expect_within(rate, 10, 1e8, "condvar cycles/s");
  }
  expect_summary(condvar.at("cycles_per_s"), condvar.at("runs"), "cycles_per_s");
  EXPECT_FALSE(condvar.at("fifo").at("requested").get<bool>());
}

TEST_F(LabScenarioTest, CondvarWithFifoRunsEitherWayAndSaysWhich) {
  const nlohmann::json doc = run_bench(
      {"condvar", "--runs", "2", "--iterations", "100", "--fifo", "1", "--signal-under-mutex"});
  const nlohmann::json& fifo = doc.at("scenarios").at("condvar").at("fifo");
  EXPECT_TRUE(fifo.at("requested").get<bool>());
  EXPECT_TRUE(fifo.at("applied").is_boolean());
  EXPECT_EQ(fifo.at("applied").get<bool>(), fifo.at("error").get<std::string>().empty());
}

TEST_F(LabScenarioTest, StormComparesThreadsAndProcesses) {
  const nlohmann::json doc = run_bench({"storm", "--threads", "4", "--calls", "100", "--runs", "2",
                                        "--processes", "--syscall", "gettid"});
  const nlohmann::json& storm = doc.at("scenarios").at("storm");
  EXPECT_EQ(storm.at("parameters").at("syscall"), "gettid");
  for (const char* kind : {"threads", "processes"}) {
    const nlohmann::json& variant = storm.at("variants").at(kind);
    ASSERT_EQ(variant.at("runs").size(), 2u);
    expect_summary(variant.at("real_s"), variant.at("runs"), "real_s");
    expect_summary(variant.at("calls_per_s"), variant.at("runs"), "calls_per_s");
    for (const nlohmann::json& run : variant.at("runs")) {
      const double real_s = run.at("real_s"), rate = run.at("calls_per_s");
      EXPECT_NEAR(rate, 4 * 100 / real_s, 1e-9 * rate) << kind;
      // A system call is more than 10 ns on each CPU.
      expect_within(rate, 1, 1e8 * doc.at("machine").at("online_cpus").get<double>(), kind);
      EXPECT_GE(run.at("user_s").get<double>(), 0.0);
      EXPECT_GE(run.at("sys_s").get<double>(), 0.0);
    }
  }
}

TEST_F(LabScenarioTest, PiRunsOrSaysWhyItSkipped) {
  const nlohmann::json doc = run_bench({"pi", "--runs", "1", "--hold-ms", "2", "--hog-ms", "4"});
  const nlohmann::json& pi = doc.at("scenarios").at("pi");
  if (pi.at("skipped").get<bool>()) {
    GTEST_SKIP() << "pi skipped by the scenario itself: " << pi.at("reason").get<std::string>();
  }
  ASSERT_EQ(pi.at("cases").size(), 2u);
  for (const nlohmann::json& c : pi.at("cases")) {
    ASSERT_EQ(c.at("runs").size(), 1u);
    // With inheritance the high thread waits out the hold; without, the hog's time too.
    EXPECT_EQ(c.at("expected_high_blocked_ms").get<double>(),
              c.at("priority_inheritance").get<bool>() ? 2.0 : 2.0 + 4.0);
    expect_summary(c.at("high_blocked_ms"), c.at("runs"), "high_blocked_ms");
  }
}

TEST_F(LabScenarioTest, C2cReportsPairsOrSkips) {
  const nlohmann::json doc = run_bench({"c2c", "--runs", "2", "--round-trips", "2000"});
  const nlohmann::json& c2c = doc.at("scenarios").at("c2c");
  if (c2c.value("skipped", false)) GTEST_SKIP() << c2c.at("reason").get<std::string>();
  ASSERT_FALSE(c2c.at("pairs").empty());
  const double rtt = c2c.at("best_round_trip_ns");
  EXPECT_NEAR(c2c.at("handoff_bound_per_second").get<double>(), 2e9 / rtt, 1e-6 * 2e9 / rtt);
  EXPECT_EQ(c2c.at("one_way_ns").get<double>(), rtt / 2);
  // A cache line crossing cores takes more than 2 ns and, spinning, far less than a millisecond.
  expect_within(c2c.at("one_way_ns"), 2, 1e6, "c2c one-way ns");
  double best_median = INFINITY;
  for (const nlohmann::json& pair : c2c.at("pairs")) {
    EXPECT_NE(pair.at("cpu_a"), pair.at("cpu_b"));
    ASSERT_EQ(pair.at("round_trip_ns").size(), 2u);
    expect_summary_of(pair.at("summary"), pair.at("round_trip_ns"), "round_trip_ns");
    best_median = std::min(best_median, pair.at("summary").at("median").get<double>());
  }
  EXPECT_EQ(rtt, best_median);  // the best pair's median
}

// `all` at scale 0.01: each scenario with its fixed run counts and scaled sizes
// (all_scenario.cpp), and key figures that are the figures of the scenarios they come from.
TEST_F(LabScenarioTest, AllRunsEveryScenarioAndExtractsKeyFigures) {
  const nlohmann::json doc = run_bench({"all", "--scale", "0.01"});
  const nlohmann::json& scenarios = doc.at("scenarios");
  const nlohmann::json& figures = scenarios.at("key_figures");

  const nlohmann::json& c2c = scenarios.at("c2c");
  EXPECT_EQ(c2c.at("parameters").at("round_trips"), 2000);
  if (!c2c.value("skipped", false)) {
    for (const nlohmann::json& pair : c2c.at("pairs")) {
      ASSERT_EQ(pair.at("round_trip_ns").size(), 5u);
      expect_summary_of(pair.at("summary"), pair.at("round_trip_ns"), "round_trip_ns");
    }
    expect_within(c2c.at("one_way_ns"), 2, 1e6, "c2c one-way ns");
    EXPECT_EQ(figures.at("c2c_round_trip_ns"), c2c.at("best_round_trip_ns"));
    EXPECT_EQ(figures.at("c2c_handoff_bound_per_s"), c2c.at("handoff_bound_per_second"));
  }

  const nlohmann::json& mutex = scenarios.at("mutex");
  ASSERT_EQ(mutex.at("cases").size(), 2 * 11u);  // every lock, 1 and 2 threads
  for (const nlohmann::json& c : mutex.at("cases")) {
    const std::string lock = c.at("lock");
    const int threads = c.at("threads");
    ASSERT_EQ(c.at("runs").size(), 3u) << lock;
    expect_summary(c.at("iterations_per_ms"), c.at("runs"), "iterations_per_ms");
    for (const nlohmann::json& run : c.at("runs")) {
      // Timed runs (10 ms each): the shares differ, but each thread's count is its own, and
      // the lock's counter (verified by the scenario) is their sum.
      std::uint64_t sum = 0;
      for (const nlohmann::json& mine : run.at("per_thread_acquisitions")) {
        sum += mine.get<std::uint64_t>();
      }
      EXPECT_EQ(run.at("acquisitions").get<std::uint64_t>(), sum) << lock;
      if (threads == 1) {
        EXPECT_EQ(run.at("handoffs").get<std::uint64_t>(), 0u) << lock;
      }
      expect_within(run.at("jain_index"), 1.0 / threads - 1e-12, 1.0 + 1e-12, lock + " Jain");
    }
    if (lock == "pthread") {
      EXPECT_EQ(figures.at(fmt::format("pthread_iterations_per_ms_{}_threads", threads)),
                c.at("iterations_per_ms").at("mean"));
    }
  }

  const nlohmann::json& condvar = scenarios.at("condvar");
  EXPECT_EQ(condvar.at("parameters").at("iterations"), 200);
  ASSERT_EQ(condvar.at("runs").size(), 10u);
  expect_summary(condvar.at("cycles_per_s"), condvar.at("runs"), "cycles_per_s");
  for (const nlohmann::json& run : condvar.at("runs")) {
    expect_within(run.at("cycles_per_s"), 10, 1e8, "condvar cycles/s");
  }
  EXPECT_EQ(figures.at("condvar_cycles_per_s_median"), condvar.at("cycles_per_s").at("median"));

  const nlohmann::json& storm = scenarios.at("storm");
  EXPECT_EQ(storm.at("parameters").at("threads"), 256);
  EXPECT_EQ(storm.at("parameters").at("calls"), 100);
  for (const char* kind : {"threads", "processes"}) {
    const nlohmann::json& variant = storm.at("variants").at(kind);
    ASSERT_EQ(variant.at("runs").size(), 3u) << kind;
    expect_summary(variant.at("real_s"), variant.at("runs"), "real_s");
    for (const char* figure : {"real_s", "user_s", "sys_s"}) {
      EXPECT_EQ(figures.at(std::string("storm_") + kind).at(figure), variant.at(figure).at("mean"))
          << kind << " " << figure;
    }
  }

  const nlohmann::json& pi = scenarios.at("pi");
  if (pi.at("skipped").get<bool>()) {
    EXPECT_EQ(figures.at("pi"), "skipped: " + pi.at("reason").get<std::string>());
  } else {
    EXPECT_EQ(pi.at("parameters").at("hold_ms"), 1);  // at least 1 ms, 20 ms × 0.01 otherwise
    EXPECT_EQ(pi.at("parameters").at("hog_ms"), 2);
    for (const nlohmann::json& c : pi.at("cases")) {
      ASSERT_EQ(c.at("runs").size(), 2u);
      expect_summary(c.at("high_blocked_ms"), c.at("runs"), "high_blocked_ms");
      EXPECT_EQ(figures.at("pi_high_blocked_ms_" + c.at("lock").get<std::string>()),
                c.at("high_blocked_ms").at("median"));
    }
  }
}

// The lab's own error type; the CLI prints it as `lockscope: error: …` + `hint: …`, exit 125
// (tests/integration/errors_test.cpp runs the binary).
TEST(LabCommandErrors, UnknownScenarioLockOrOptionIsAOneLineErrorWithAHint) {
  auto expect_cli_error = [](std::vector<std::string> args, const std::string& fragment) {
    try {
      run_bench_command(args);
      ADD_FAILURE() << "no error for " << args.back();
    } catch (const BenchError& error) {
      EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
      EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos);
      EXPECT_FALSE(error.hint().empty());
    }
  };
  expect_cli_error({"bench", "nope"}, "unknown bench scenario 'nope'");
  expect_cli_error({"bench", "mutex", "--locks", "pthread,bogus"}, "unknown lock 'bogus'");
  expect_cli_error({"bench", "mutex", "--frobnicate"}, "--frobnicate");
  expect_cli_error({"bench", "mutex", "--duration", "1", "--iterations", "5"}, "excludes");
  expect_cli_error({"bench", "storm", "--syscall", "fork"}, "fork");
  expect_cli_error({"bench", "pi", "--locks", "tas"}, "unknown lock 'tas'");
  expect_cli_error({"bench"}, "subcommand");
}

}  // namespace
}  // namespace lockscope::lab
