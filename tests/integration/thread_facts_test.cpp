// The profile's thread facts (lifetime, CPU time, scheduling policy) and the process's CPUs, from
// the thread_facts fixture under the real runtime, against what the fixture measured itself.
#include <gtest/gtest.h>
#include <sched.h>

#include <cerrno>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

// The runtime maps its clock to CLOCK_REALTIME once, at its start, and the fixture reads
// CLOCK_REALTIME itself: the two drift apart by the TSC's calibration error (~1e-5 of the run's
// ~0.2 s: microseconds) and by NTP's slewing of CLOCK_REALTIME (at most 500 ppm: 0.1 ms). A time
// in the profile must fall within the fixture's bracket widened by this much.
constexpr int64_t kClockSlackNs = 500'000;
// The CPU a thread spends between its own last reading and the runtime's at its exit destructor:
// a return and glibc's exit path up to the key destructors, microseconds of work. CPU time does not
// grow while a thread waits to run, so a loaded machine does not widen it.
constexpr uint64_t kExitCpuSlackNs = 1'000'000;

struct Measured {
  int cpus = -1;
  uint32_t burner = 0, fifo = 0, batch = 0;  // tids
  int64_t burner_start_before = 0, burner_start_after = 0, burner_end_before = 0, burner_joined = 0;
  uint64_t burner_cpu_ns = 0;
  int fifo_result = -1;
  int64_t batch_start_before = 0, batch_start_after = 0;
  uint64_t batch_cpu_ns = 0;
};

Measured parse_measured(const std::string& err) {
  Measured m;
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    std::string what;
    in >> what;
    if (what == "cpus") in >> m.cpus;
    if (what == "burner")
      in >> m.burner >> m.burner_start_before >> m.burner_start_after >> m.burner_end_before >>
          m.burner_joined >> m.burner_cpu_ns;
    if (what == "fifo") in >> m.fifo >> m.fifo_result;
    if (what == "batch")
      in >> m.batch >> m.batch_start_before >> m.batch_start_after >> m.batch_cpu_ns;
  }
  return m;
}

const ThreadSummary* thread_with_tid(const ProcessProfile& process, uint32_t tid) {
  for (const ThreadSummary& thread : process.threads)
    if (thread.tid == tid) return &thread;
  return nullptr;
}

// `ns` of the profile (since the runtime's start) as CLOCK_REALTIME.
int64_t realtime_of(const ProcessProfile& process, uint64_t ns) {
  return static_cast<int64_t>(process.start_realtime_ns + ns);
}

void expect_within(int64_t value, int64_t low, int64_t high, const char* what) {
  EXPECT_GE(value, low - kClockSlackNs) << what << " came " << (low - value) << " ns early";
  EXPECT_LE(value, high + kClockSlackNs) << what << " came " << (value - high) << " ns late";
}

struct Recorded {
  ProcessProfile process;
  Measured measured;
};

Recorded record_thread_facts(const TemporaryDirectory& dir) {
  const CommandResult result =
      run_lockscope({"record", "-o", dir.path(), "--", fixture("thread_facts")});
  EXPECT_EQ(result.exit_status, 0) << result.err;
  EXPECT_EQ(result.err.find("UNEXPECTED"), std::string::npos) << result.err;
  Profile profile = load_profile(dir.path());
  EXPECT_TRUE(profile.problems.empty());
  if (profile.processes.size() != 1) {
    ADD_FAILURE() << "expected one process, got " << profile.processes.size();
    return {};
  }
  return {profile.processes[0], parse_measured(result.err)};
}

TEST(ThreadFacts, LifetimesCpuAndPoliciesAreWhatTheThreadsMeasuredThemselves) {
  TemporaryDirectory dir;
  const auto [process, m] = record_thread_facts(dir);
  ASSERT_GT(m.cpus, 0) << "the fixture printed no measurements";
  EXPECT_EQ(process.online_cpus, static_cast<uint32_t>(m.cpus));

  // Ended before the write: its life from its first lock call to its exit, its CPU at its exit.
  const ThreadSummary* burner = thread_with_tid(process, m.burner);
  ASSERT_NE(burner, nullptr);
  ASSERT_TRUE(burner->lifetime_known);
  expect_within(realtime_of(process, burner->start_ns), m.burner_start_before, m.burner_start_after,
                "the burner's start");
  ASSERT_NE(burner->end_ns, 0u) << "it ended before the write";
  expect_within(realtime_of(process, burner->end_ns), m.burner_end_before, m.burner_joined,
                "the burner's end");
  ASSERT_TRUE(burner->cpu_known);
  EXPECT_GE(burner->cpu_ns, m.burner_cpu_ns);
  EXPECT_LE(burner->cpu_ns, m.burner_cpu_ns + kExitCpuSlackNs);
  EXPECT_GE(burner->cpu_ns, 50 * kMs) << "it burned 50 ms";
  ASSERT_TRUE(burner->sched_known);
  EXPECT_EQ(burner->sched_policy, SCHED_OTHER);
  EXPECT_EQ(burner->sched_priority, 0);

  // Registered as SCHED_OTHER, then switched: its exit shows the policy it ended with.
  const ThreadSummary* fifo = thread_with_tid(process, m.fifo);
  ASSERT_NE(fifo, nullptr);
  ASSERT_TRUE(fifo->sched_known);
  if (m.fifo_result == 0) {
    EXPECT_EQ(fifo->sched_policy, SCHED_FIFO);
    EXPECT_EQ(fifo->sched_priority, 7);
  } else {
    EXPECT_EQ(m.fifo_result, EPERM) << "SCHED_FIFO refused for another reason";
    EXPECT_EQ(fifo->sched_policy, SCHED_OTHER) << "SCHED_FIFO was refused (EPERM)";
  }
  ASSERT_TRUE(fifo->lifetime_known);
  EXPECT_GT(fifo->start_ns, burner->end_ns) << "it started after the burner was joined";
  EXPECT_NE(fifo->end_ns, 0u);

  // Still running at the write: no end, its CPU and policy read by the writer.
  const ThreadSummary* batch = thread_with_tid(process, m.batch);
  ASSERT_NE(batch, nullptr);
  EXPECT_FALSE(batch->flags & format::kThreadExited);
  ASSERT_TRUE(batch->lifetime_known);
  expect_within(realtime_of(process, batch->start_ns), m.batch_start_before, m.batch_start_after,
                "the batch thread's start");
  EXPECT_EQ(batch->end_ns, 0u);
  ASSERT_TRUE(batch->cpu_known);
  EXPECT_GE(batch->cpu_ns, m.batch_cpu_ns);
  EXPECT_LE(batch->cpu_ns, m.batch_cpu_ns + kExitCpuSlackNs) << "it only slept after its reading";
  ASSERT_TRUE(batch->sched_known);
  EXPECT_EQ(batch->sched_policy, SCHED_BATCH) << "changed after its registration";
  EXPECT_EQ(batch->sched_priority, 0);

  // The main thread ran from the runtime's start to the write.
  int mains = 0;
  for (const ThreadSummary& thread : process.threads) {
    if (!(thread.flags & format::kThreadMain)) continue;
    ++mains;
    EXPECT_TRUE(thread.lifetime_known);
    EXPECT_EQ(thread.start_ns, 0u);
    EXPECT_EQ(thread.end_ns, 0u);
    EXPECT_TRUE(thread.cpu_known);
    EXPECT_TRUE(thread.sched_known);
  }
  EXPECT_EQ(mains, 1);
}

TEST(ThreadFacts, OnlineCpusAreThoseTheProcessMayRunOnNotTheMachines) {
  cpu_set_t all, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  int first = 0;
  while (first < CPU_SETSIZE && !CPU_ISSET(first, &all)) ++first;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  // This thread's mask is what the commands it starts inherit.
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  TemporaryDirectory dir;
  const Recorded recorded = record_thread_facts(dir);
  ASSERT_EQ(sched_setaffinity(0, sizeof(all), &all), 0);
  EXPECT_EQ(recorded.measured.cpus, 1);
  EXPECT_EQ(recorded.process.online_cpus, 1u) << "the machine has " << CPU_COUNT(&all);
}

TEST(ThreadFacts, TheJsonReportCarriesThem) {
  TemporaryDirectory dir;
  const auto [process, m] = record_thread_facts(dir);
  const CommandResult json_run = run_lockscope({"report", dir.path(), "-f", "json"});
  ASSERT_EQ(json_run.exit_status, 0) << json_run.err;
  const auto document = nlohmann::json::parse(json_run.out);
  const auto& process_json = document["processes"][0];
  EXPECT_EQ(process_json["online_cpus"], process.online_cpus);
  int checked = 0;
  for (const auto& thread : process_json["threads"]) {
    const ThreadSummary* model = thread_with_tid(process, thread["tid"].get<uint32_t>());
    ASSERT_NE(model, nullptr);
    EXPECT_EQ(thread["start_ns"], model->start_ns);
    EXPECT_EQ(thread["end_ns"], model->end_ns);
    EXPECT_EQ(thread["cpu_ns"], model->cpu_ns);
    EXPECT_EQ(thread["sched_priority"], model->sched_priority);
    const uint32_t tid = model->tid;
    const char* policy = tid == m.batch                        ? "SCHED_BATCH"
                         : tid == m.fifo && m.fifo_result == 0 ? "SCHED_FIFO"
                                                               : "SCHED_OTHER";
    EXPECT_EQ(thread["sched_policy"], policy) << tid;
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

}  // namespace
}  // namespace lockscope::testing
