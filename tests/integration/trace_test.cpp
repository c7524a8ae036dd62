// Trace mode (record --trace): the events agree with the summary tables of the same run, a process
// killed by SIGKILL keeps every event up to the kill, full files and the --min-wait filter lose
// only what they say they lose, and damaged trace files are named, never fatal.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "analysis/trace_reader.h"
#include "analysis/trace_summary.h"
#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

using format::Operation;
using format::TraceKind;

const std::vector<std::string> kTraceEveryHold = {"--trace", "--hold-sample", "1"};

const SiteSummary* same_site(const LockSummary& lock, const SiteSummary& site) {
  for (const SiteSummary& other : lock.sites)
    if (other.operation == site.operation && other.location.module == site.location.module &&
        other.location.offset == site.location.offset)
      return &other;
  return nullptr;
}

const LockSummary* same_lock(const std::vector<LockSummary>& locks, const LockSummary& lock) {
  for (const LockSummary& other : locks)
    if (other.address == lock.address && other.generation == lock.generation) return &other;
  return nullptr;
}

struct TracedFixture {
  std::string name;
  std::vector<std::string> args;
};

class TraceAgreesWithTables : public ::testing::TestWithParam<TracedFixture> {};

// Counts, contention, failures, waits and holds are the same numbers: both come from the same
// clock readings, converted the runtime's way.
TEST_P(TraceAgreesWithTables, EverySiteAndThread) {
  TemporaryDirectory dir;
  const ProcessProfile process =
      record_unchanged(dir, GetParam().name, GetParam().args, kTraceEveryHold);
  ASSERT_TRUE(process.trace.present);
  EXPECT_EQ(process.trace.lost(), 0u);
  EXPECT_FALSE(process.trace.cut_short);
  const TraceSummary traced = summarize_trace(process);
  size_t compared = 0;
  for (const LockSummary& lock : process.locks) {
    if (lock.sites.empty()) continue;
    const LockSummary* from_trace = same_lock(traced.locks, lock);
    ASSERT_NE(from_trace, nullptr) << lock_kind_name(lock) << " " << lock.address;
    EXPECT_EQ(from_trace->owner_changes, lock.owner_changes) << lock.address;
    for (const SiteSummary& site : lock.sites) {
      const SiteSummary* other = same_site(*from_trace, site);
      ASSERT_NE(other, nullptr) << site.location.label << " " << operation_name(site.operation);
      const std::string where = site.location.label + " " + operation_name(site.operation);
      EXPECT_EQ(other->count, site.count) << where;
      EXPECT_EQ(other->contended, site.contended) << where;
      EXPECT_EQ(other->failed, site.failed) << where;
      EXPECT_EQ(other->wait_sum_ns, site.wait_sum_ns) << where;
      EXPECT_EQ(other->wait_max_ns, site.wait_max_ns) << where;
      EXPECT_TRUE(other->wait == site.wait) << where;
      EXPECT_EQ(other->with_waiters, site.with_waiters) << where;
      EXPECT_EQ(other->without_waiters, site.without_waiters) << where;
      EXPECT_EQ(other->arrived_last, site.arrived_last) << where;
      // Every hold is timed (--hold-sample 1), and the trace's events carry the very clock
      // readings that timed them: the same numbers.
      EXPECT_EQ(other->hold_sum_ns, site.hold_sum_ns) << where;
      EXPECT_EQ(other->hold_max_ns, site.hold_max_ns) << where;
      ++compared;
    }
  }
  EXPECT_GT(compared, 0u);
  for (const ThreadSummary& thread : process.threads) {
    const ThreadSummary* other = nullptr;
    for (const ThreadSummary& t : traced.threads)
      if (t.tid == thread.tid) other = &t;
    ASSERT_NE(other, nullptr) << thread.tid;
    EXPECT_EQ(other->acquisitions, thread.acquisitions) << thread.tid;
    EXPECT_EQ(other->releases, thread.releases) << thread.tid;
    EXPECT_EQ(other->contended, thread.contended) << thread.tid;
    EXPECT_EQ(other->failed, thread.failed) << thread.tid;
    EXPECT_EQ(other->wait_sum_ns, thread.wait_sum_ns) << thread.tid;
    EXPECT_EQ(other->wait_ns_by_primitive, thread.wait_ns_by_primitive) << thread.tid;
    EXPECT_EQ(other->barrier_last_arrivals, thread.barrier_last_arrivals) << thread.tid;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, TraceAgreesWithTables,
    ::testing::Values(TracedFixture{"counter_threads", {}}, TracedFixture{"sleepy_holder", {"20"}},
                      TracedFixture{"mutex_semantics", {}},
                      TracedFixture{"rwlock_sides", {"3", "200"}},
                      TracedFixture{"semaphores", {"100"}}, TracedFixture{"barrier_rounds", {"50"}},
                      TracedFixture{"spin_counter", {"2000"}},
                      TracedFixture{"condvar_wakeups", {"50"}}, TracedFixture{"condvar_split", {}},
                      // Signal handlers that lock while the trace is being appended to (and
                      // thousands of keys); locks after the thread-exit destructor.
                      TracedFixture{"signal_during_merge", {"2"}},
                      TracedFixture{"thread_exit_locks", {"4"}},
                      // Condition and semaphore waits cancelled or interrupted inside the call
                      // (kTraceInterrupted).
                      TracedFixture{"thread_cancel", {"20"}},
                      // Locks held again inside their own hold: the inner holds add no time.
                      TracedFixture{"recursive_holds", {}}),
    [](const ::testing::TestParamInfo<TracedFixture>& param_info) {
      return param_info.param.name;
    });

// Killed by SIGKILL after its start-up snapshot: the report still has every call, from the trace,
// says the process was cut short, and shows the wait it was killed in.
TEST(Trace, AProcessKilledBySigkillKeepsEveryEventUpToTheKill) {
  TemporaryDirectory dir, capture;
  const StartedCommand started = start_command(
      {LOCKSCOPE_CLI, "record", "-o", dir.path(), "--trace", "--", fixture("killed_traced")},
      capture, "record");
  int pid = 0;
  const CommandResult result =
      kill_when_ready(started, 200, &pid);  // it blocks right after "ready"
  ASSERT_GT(pid, 0);
  EXPECT_EQ(result.signal, SIGKILL) << result.err;

  const Profile profile = load_profile(dir.path());
  ASSERT_EQ(profile.processes.size(), 1u) << result.err;
  EXPECT_TRUE(profile.problems.empty());
  const ProcessProfile& process = profile.processes[0];
  EXPECT_EQ(process.exit_path, format::ExitPath::kSnapshot) << "only the start-up snapshot";
  EXPECT_TRUE(process.trace.cut_short);
  const FoundSite lock = find_site(process, "killed_traced", "counted-lock", Operation::kLock);
  ASSERT_NE(lock.site, nullptr);
  EXPECT_EQ(lock.site->count, 1000u);
  const FoundSite unlock =
      find_site(process, "killed_traced", "counted-unlock", Operation::kUnlock);
  ASSERT_NE(unlock.site, nullptr);
  EXPECT_EQ(unlock.site->count, 1000u);
  EXPECT_EQ(lock.site->hold_samples, 1000u) << "every hold is timed from the trace";
  const FoundSite main_wait =
      find_site(process, "killed_traced", "main-wait", Operation::kCondWait);
  ASSERT_NE(main_wait.site, nullptr);
  EXPECT_GE(main_wait.site->count, 20u) << "at least one wait per round trip";
  const FoundSite hold = find_site(process, "killed_traced", "hold-forever", Operation::kLock);
  ASSERT_NE(hold.site, nullptr);
  EXPECT_EQ(hold.site->count, 1u);

  // The wait in progress: begun at its line, never ended.
  const int blocked_line = marker_line("killed_traced", "blocked-forever");
  size_t begun = 0, ended = 0;
  for (const TraceRecord& event : process.trace.events) {
    if (!located_at(process.trace.sites[event.site], "killed_traced.c", blocked_line)) continue;
    if (event.kind == TraceKind::kWaitBegin) ++begun;
    if (event.kind == TraceKind::kCall) ++ended;
  }
  EXPECT_EQ(begun, 1u);
  EXPECT_EQ(ended, 0u);
  // Its run lasted at least to its last event (the snapshot's duration is that of its start-up):
  // no thread waited longer than the run.
  uint64_t last_ns = 0;
  for (const TraceRecord& event : process.trace.events) last_ns = std::max(last_ns, event.time_ns);
  EXPECT_GE(process.duration_ns, last_ns);
  for (const ThreadSummary& thread : process.threads)
    EXPECT_LE(thread.wait_sum_ns, process.duration_ns) << thread.tid;

  // Its threads never exited, yet each has its name (the one it started with).
  ASSERT_EQ(process.threads.size(), 2u);
  for (const ThreadSummary& thread : process.threads)
    EXPECT_EQ(thread.name, "fixture_killed_") << thread.tid;

  const CommandResult text = run_lockscope({"report", dir.path()});
  ASSERT_EQ(text.exit_status, 0) << text.err;
  EXPECT_NE(text.out.find("cut short"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("later calls are missing"), std::string::npos) << text.out;
}

// Every thread's events: thread-start and its name, its calls (a contended one begins with a
// wait-begin), then its name again and exit (not the main thread's, which leaves by exit()).
uint64_t expected_events(const ProcessProfile& process, uint32_t tid) {
  for (const ThreadSummary& thread : process.threads)
    if (thread.tid == tid)
      return thread.acquisitions + thread.releases + thread.contended +
             ((thread.flags & format::kThreadMain) ? 2 : 4);
  return 0;
}

// The smallest file holds 64 events: the rest are dropped, and counted, one by one.
TEST(Trace, AFullFileDropsTheLaterEventsAndCountsThem) {
  TemporaryDirectory dir;
  const ProcessProfile process =
      record_unchanged(dir, "counter_threads", {}, {"--trace", "--trace-size", "4096"});
  ASSERT_EQ(process.trace.threads.size(), process.threads.size());
  uint64_t dropped = 0;
  for (const TraceThread& thread : process.trace.threads) {
    EXPECT_LE(thread.events, 128u);
    EXPECT_EQ(thread.overwritten, 0u);
    EXPECT_EQ(thread.events + thread.dropped, expected_events(process, thread.tid)) << thread.tid;
    dropped += thread.dropped;
  }
  EXPECT_GT(dropped, 0u);
  EXPECT_EQ(process.locks[0].acquisitions, 4000u) << "the tables keep every count";
  const CommandResult text = run_lockscope({"report", dir.path()});
  EXPECT_NE(text.out.find("events dropped: a thread's trace file was full"), std::string::npos)
      << text.out;
}

// A thread of more distinct (lock, site, operation) keys than its file's key table holds (64 in
// the smallest file): the events of the keys beyond are dropped, counted and named, the tables
// keep every count, and a ring's slots never fill.
TEST(Trace, AFullKeyTableDropsTheEventsOfNewKeysAndSaysSo) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(
      dir, "scale", {"locks", "500"}, {"--trace", "--trace-size", "4K", "--trace-full", "ring"});
  uint64_t dropped_no_key = 0;
  for (const TraceThread& thread : process.trace.threads) {
    EXPECT_EQ(thread.events + thread.overwritten + thread.dropped,
              expected_events(process, thread.tid))
        << thread.tid;
    EXPECT_EQ(thread.dropped, thread.dropped_no_key) << "a ring drops only for its keys";
    dropped_no_key += thread.dropped_no_key;
  }
  // Two threads, each 1,000 keys (a lock and an unlock of 500 mutexes) past the table's 64.
  EXPECT_GE(dropped_no_key, 2u * (1000 - 64));
  EXPECT_EQ(process.locks.size(), 500u) << "the tables keep every count";
  const CommandResult text = run_lockscope({"report", dir.path()});
  EXPECT_NE(
      unwrapped_notes(text.out).find("of them its table of distinct lock, site and operation keys"),
      std::string::npos)
      << text.out;
}

// A ring keeps the latest 64 slots: the thread's exit is among them.
TEST(Trace, ARingKeepsTheLatestEventsAndCountsTheOverwritten) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(
      dir, "counter_threads", {}, {"--trace", "--trace-size", "4K", "--trace-full", "ring"});
  ASSERT_TRUE(process.trace.ring);
  for (const TraceThread& thread : process.trace.threads) {
    EXPECT_EQ(thread.dropped, 0u);
    EXPECT_EQ(thread.events + thread.overwritten, expected_events(process, thread.tid));
  }
  bool exit_kept = false;
  for (const TraceRecord& event : process.trace.events)
    exit_kept = exit_kept || event.kind == TraceKind::kThreadExit;
  EXPECT_TRUE(exit_kept);
}

// 2 ms holds waited for 20 times: with --min-wait 1ms exactly those 20 waits are written (begin
// and end); everything else is filtered, and the tables still count every call.
TEST(Trace, MinWaitKeepsOnlyTheLongWaits) {
  TemporaryDirectory dir;
  const ProcessProfile process =
      record_unchanged(dir, "sleepy_holder", {"20"}, {"--trace", "--min-wait", "1ms"});
  EXPECT_EQ(process.trace.min_wait_ns, 1000000u);
  size_t begins = 0, waits = 0, others = 0;
  uint64_t filtered = 0;
  for (const TraceThread& thread : process.trace.threads) filtered += thread.filtered;
  for (const TraceRecord& event : process.trace.events) {
    if (event.kind == TraceKind::kWaitBegin)
      ++begins;
    else if (event.kind == TraceKind::kCall && (event.flags & format::kTraceWaited))
      ++waits;
    else if (event.kind == TraceKind::kCall)
      ++others;
  }
  EXPECT_EQ(waits, 20u);
  EXPECT_EQ(begins, 20u);
  EXPECT_EQ(others, 0u);
  EXPECT_GT(filtered, 40u) << "the uncontended calls";
  const FoundSite slow = find_site(process, "sleepy_holder", "holder-lock", Operation::kLock);
  if (slow.site) {
    EXPECT_GE(slow.site->count, 20u);
  }
  const CommandResult text = run_lockscope({"report", dir.path()});
  EXPECT_NE(text.out.find("only waits of at least 1.00ms kept (--min-wait)"), std::string::npos)
      << text.out;
}

// A fork's child writes its own files (never the parent's, which it inherited mapped), and an
// exec'd image starts new ones.
TEST(Trace, ForkAndExecGiveEachProcessImageItsOwnFiles) {
  TemporaryDirectory dir;
  const Profile profile =
      record_all_unchanged(dir, {fixture("fork_exec")}, nullptr, nullptr, {"--trace"});
  ASSERT_GE(profile.processes.size(), 2u);
  for (const ProcessProfile& process : profile.processes) {
    ASSERT_TRUE(process.trace.present) << process.pid;
    const TraceSummary traced = summarize_trace(process);
    for (const LockSummary& lock : process.locks) {
      if (lock.sites.empty()) continue;
      const LockSummary* other = same_lock(traced.locks, lock);
      ASSERT_NE(other, nullptr) << process.pid;
      EXPECT_EQ(other->acquisitions, lock.acquisitions) << process.pid;
    }
    for (const TraceThread& thread : process.trace.threads) EXPECT_TRUE(thread.problem.empty());
  }
}

// Each traced image writes a snapshot as it starts; one that execs before any call leaves no
// process in the report, as in summary mode (it once showed up "cut short").
TEST(Trace, ImagesThatExecBeforeAnyCallAreNotProcessesOfTheReport) {
  const std::vector<std::string> program = {"/bin/sh", "-c", "exec /bin/sh -c 'exec /bin/true'"};
  TemporaryDirectory summary_dir, trace_dir;
  const Profile summary = record_all_unchanged(summary_dir, program);
  const Profile traced = record_all_unchanged(trace_dir, program, nullptr, nullptr, {"--trace"});
  ASSERT_EQ(traced.processes.size(), summary.processes.size());
  for (const ProcessProfile& process : traced.processes) EXPECT_FALSE(process.trace.cut_short);
}

// A program's fork handler that runs in the child before lockscope's own locks: its events must
// not land in the parent's trace file, which the child inherited mapped (they once did, and the
// child's appends raced the parent's on the shared count).
TEST(Trace, AForkChildNeverWritesIntoItsParentsTrace) {
  TemporaryDirectory dir;
  const Profile profile =
      record_all_unchanged(dir, {fixture("fork_handler_locks")}, nullptr, nullptr, {"--trace"});
  ASSERT_EQ(profile.processes.size(), 2u);
  for (const ProcessProfile& process : profile.processes) {
    const FoundSite lock = find_site(process, "fork_handler_locks", "lock", Operation::kLock);
    ASSERT_NE(lock.site, nullptr) << process.pid;
    const bool parent = !process.parent_was_profiled;
    EXPECT_EQ(lock.site->count, parent ? 10u : 5u) << process.pid;
    const TraceSummary traced = summarize_trace(process);
    const LockSummary* from_trace = same_lock(traced.locks, *lock.lock);
    ASSERT_NE(from_trace, nullptr) << process.pid;
    EXPECT_EQ(from_trace->acquisitions, parent ? 10u : 5u) << process.pid;
  }
}

// A store into a page of a shared file mapping that the file system cannot back raises SIGBUS: a
// full disk once killed the traced program. Pages are now populated ahead (MADV_POPULATE_WRITE),
// and a refusal stops the trace instead (events dropped, counted). Needs a small tmpfs (root).
TEST(Trace, AFullDiskDropsEventsInsteadOfKillingTheProgram) {
  TemporaryDirectory dir;
  const std::string mount_point = dir / "small";
  std::filesystem::create_directory(mount_point);
  if (!std::filesystem::exists("/bin/mount") ||
      run_command({"/bin/mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mount_point})
              .exit_status != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here";
  const std::vector<std::string> program = {fixture("spin_counter"), "200000"};
  const CommandResult plain = run_command(program);
  std::vector<std::string> command = {LOCKSCOPE_CLI,        "record",  "-o",
                                      mount_point + "/out", "--trace", "--"};
  command.insert(command.end(), program.begin(), program.end());
  const CommandResult traced = run_command(command);
  const Profile profile = load_profile(mount_point + "/out");
  run_command({"/bin/umount", mount_point});
  EXPECT_EQ(traced.signal, 0) << "SIGBUS is 7: " << traced.err;
  EXPECT_EQ(traced.exit_status, plain.exit_status) << traced.err;
  EXPECT_EQ(traced.out, plain.out);
  ASSERT_EQ(profile.processes.size(), 1u);
  EXPECT_GT(profile.processes[0].trace.lost(), 0u) << "2 MiB hold fewer events than it made";
}

TEST(Trace, BadOptionsAreOneLineErrors) {
  const std::vector<std::vector<std::string>> bad = {
      {"record", "--min-wait", "10us", "--", "true"},
      {"record", "--trace", "--trace-size", "12", "--", "true"},
      {"record", "--trace", "--min-wait", "10", "--", "true"},
      {"record", "--trace", "--trace-full", "wrap", "--", "true"},
  };
  for (const auto& args : bad) {
    const CommandResult result = run_lockscope(args);
    EXPECT_EQ(result.exit_status, 125) << args[1] << ": " << result.err;
    EXPECT_NE(result.err.find("lockscope: error: "), std::string::npos) << result.err;
    EXPECT_EQ(result.err.find("Segmentation"), std::string::npos);
  }
}

// A trace file that is not one is named and left out; one cut short keeps what it has.
TEST(Trace, DamagedTraceFilesAreNamedAndTheRestIsReported) {
  TemporaryDirectory dir;
  record_unchanged(dir, "counter_threads", {}, {"--trace"});
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    if (entry.path().extension() == format::kTraceSuffix) files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 4u);
  {
    std::fstream bad(files[1], std::ios::in | std::ios::out | std::ios::binary);
    bad.write("NOTATRACE", 8);
  }
  {  // Cut after its 10th slot (no anchors there: the events come faster than a step's 2^31 ticks).
    format::TraceHeader header{};
    std::ifstream(files[2], std::ios::binary)
        .read(reinterpret_cast<char*>(&header), sizeof(header));
    ASSERT_EQ(header.version, format::kTraceVersion);
    ASSERT_EQ(header.anchors, 0u);
    std::filesystem::resize_file(files[2], header.events_offset + 10 * sizeof(uint64_t));
  }
  {  // A header that claims 2^40 events (it once made the reader allocate them, and fail whole).
    std::fstream huge(files[3], std::ios::in | std::ios::out | std::ios::binary);
    const uint64_t claimed = uint64_t{1} << 40;
    huge.seekp(offsetof(format::TraceHeader, capacity));
    huge.write(reinterpret_cast<const char*>(&claimed), sizeof(claimed));
    huge.seekp(offsetof(format::TraceHeader, written));
    huge.write(reinterpret_cast<const char*>(&claimed), sizeof(claimed));
  }
  const Profile profile = load_profile(dir.path());
  ASSERT_EQ(profile.processes.size(), 1u);
  ASSERT_EQ(profile.problems.size(), 1u);
  EXPECT_EQ(profile.problems[0].file, files[1]);
  EXPECT_NE(profile.problems[0].message.find("not a lockscope trace"), std::string::npos);
  bool truncated_named = false;
  for (const TraceThread& thread : profile.processes[0].trace.threads)
    if (thread.file == files[2]) {
      EXPECT_EQ(thread.events, 10u);
      truncated_named = thread.problem.find("missing") != std::string::npos;
    }
  EXPECT_TRUE(truncated_named);
  bool huge_named = false;
  for (const TraceThread& thread : profile.processes[0].trace.threads)
    if (thread.file == files[3]) huge_named = thread.problem.find("missing") != std::string::npos;
  EXPECT_TRUE(huge_named);
  const CommandResult text = run_lockscope({"report", dir.path()});
  EXPECT_EQ(text.exit_status, 0) << text.err;
  EXPECT_NE(text.err.find(files[1]), std::string::npos) << text.err;
  EXPECT_NE(text.out.find("counter_threads.c"), std::string::npos);
}

}  // namespace
}  // namespace lockscope::testing
