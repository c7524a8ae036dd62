// Every `lockscope bench` scenario, run in-process with tiny parameters through the real command
// entry point; the `--json` document is parsed and validated with nlohmann-json. Timing figures are
// never asserted — only that they exist, are numbers, and are consistent with the parameters.
#include <gtest/gtest.h>

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

  static void expect_summary(const nlohmann::json& summary, std::size_t runs) {
    EXPECT_EQ(summary.at("count").get<std::size_t>(), runs);
    const double min = summary.at("min"), max = summary.at("max"), mean = summary.at("mean");
    EXPECT_LE(min, mean);
    EXPECT_LE(mean, max);
    EXPECT_GE(summary.at("stddev").get<double>(), 0.0);
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
    for (const nlohmann::json& run : c.at("runs")) {
      EXPECT_EQ(run.at("acquisitions").get<std::uint64_t>(), 500u * threads);
      EXPECT_EQ(run.at("per_thread_acquisitions").size(), static_cast<std::size_t>(threads));
      EXPECT_LE(run.at("handoffs").get<std::uint64_t>(), 500u * threads);
      EXPECT_GT(run.at("jain_index").get<double>(), 0.0);
    }
    expect_summary(c.at("iterations_per_ms"), 2);
  }
  EXPECT_TRUE(mutex.at("relative").contains("2"));
}

TEST_F(LabScenarioTest, CondvarCountsCyclesPerRun) {
  const nlohmann::json doc = run_bench({"condvar", "--runs", "3", "--iterations", "200"});
  const nlohmann::json& condvar = doc.at("scenarios").at("condvar");
  EXPECT_EQ(condvar.at("runs").size(), 3u);
  expect_summary(condvar.at("cycles_per_s"), 3);
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
    EXPECT_EQ(variant.at("runs").size(), 2u);
    expect_summary(variant.at("real_s"), 2);
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
    EXPECT_EQ(c.at("runs").size(), 1u);
    EXPECT_GT(c.at("expected_high_blocked_ms").get<double>(), 0.0);
  }
}

TEST_F(LabScenarioTest, C2cReportsPairsOrSkips) {
  const nlohmann::json doc = run_bench({"c2c", "--runs", "2", "--round-trips", "2000"});
  const nlohmann::json& c2c = doc.at("scenarios").at("c2c");
  if (c2c.value("skipped", false)) GTEST_SKIP() << c2c.at("reason").get<std::string>();
  ASSERT_FALSE(c2c.at("pairs").empty());
  const double rtt = c2c.at("best_round_trip_ns");
  EXPECT_NEAR(c2c.at("handoff_bound_per_second").get<double>(), 2e9 / rtt, 1e-6 * 2e9 / rtt);
}

TEST_F(LabScenarioTest, AllRunsEveryScenarioAndExtractsKeyFigures) {
  const nlohmann::json doc = run_bench({"all", "--scale", "0.01"});
  const nlohmann::json& scenarios = doc.at("scenarios");
  for (const char* name : {"c2c", "mutex", "condvar", "storm", "pi", "key_figures"}) {
    EXPECT_TRUE(scenarios.contains(name)) << name;
  }
  EXPECT_TRUE(scenarios.at("key_figures").contains("condvar_cycles_per_s_median"));
  EXPECT_TRUE(scenarios.at("key_figures").contains("storm_threads"));
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
