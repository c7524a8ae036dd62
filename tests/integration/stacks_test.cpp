// Call stacks of contended waits, through wrappers, in code without frame pointers.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

using format::Operation;

// Every captured stack of the waits at the lock line names, in order, the three levels and the
// thread function at the lines of their calls (the default unwinding: frame pointers, redone with
// DWARF where the chain breaks, as it does at once in -fomit-frame-pointer code).
TEST(Stacks, WaitsThroughThreeWrappersWithoutFramePointersHaveWholeStacks) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "wrapped_locks", {"100"});
  const FoundSite wait = find_site(process, "wrapped_locks", "level3", Operation::kLock);
  ASSERT_NE(wait.site, nullptr);
  ASSERT_GT(wait.site->contended, 0u);
  ASSERT_FALSE(wait.site->stacks.empty());
  uint64_t captured = 0;
  for (const SiteStack& row : wait.site->stacks) {
    captured += row.waits;
    ASSERT_LT(row.stack, process.stacks.size());
    expect_wrapped_locks_stack(process.stacks[row.stack], "level3");
  }
  // Capture costs at most 1 % of a thread's time: at 100 us holds, every wait is captured.
  EXPECT_EQ(captured, wait.site->contended);

  const CommandResult text = run_lockscope({"report", dir.path()});
  ASSERT_EQ(text.exit_status, 0) << text.err;
  EXPECT_NE(text.out.find("stacks of the waits at"), std::string::npos) << text.out;
  const CommandResult json_run = run_lockscope({"report", "-f", "json", dir.path()});
  const auto document = nlohmann::json::parse(json_run.out);
  EXPECT_EQ(document["processes"][0]["stacks"].size(), process.stacks.size());
}

// Timed holds go to the stack of their release: every one of the fixture's holds is timed (a
// cold site's first 32, then each hold that made the other thread wait), and each stack names the
// unlock, the three wrappers and the thread function; their holds and time add up to the site's.
TEST(Stacks, TimedHoldsGoToTheStacksTheyWereReleasedFrom) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "wrapped_locks", {"100"});
  const FoundSite hold = find_site(process, "wrapped_locks", "level3", Operation::kLock);
  ASSERT_NE(hold.site, nullptr);
  ASSERT_FALSE(hold.site->hold_stacks.empty());
  uint64_t holds = 0, hold_ns = 0;
  for (const HoldStack& row : hold.site->hold_stacks) {
    holds += row.holds;
    hold_ns += row.hold_ns;
    ASSERT_LT(row.stack, process.stacks.size());
    expect_wrapped_locks_stack(process.stacks[row.stack], "level3-unlock");
  }
  EXPECT_LE(holds, hold.site->acquisitions());
  // The hold budget (1 % of the thread's wall time + 1 ms) covers most of 100 us holds; a capture
  // preempted on a loaded machine spends it faster (seen: a 2-core machine running the suite -j2).
  EXPECT_GE(holds * 2, hold.site->acquisitions()) << "the hold budget covers 100 us holds";
  EXPECT_LE(hold_ns, hold.site->hold_sum_ns);
  EXPECT_GE(hold_ns * 2, hold.site->hold_sum_ns);
}

// --stacks all: every acquisition, contended or not, is counted by its whole stack; the counts per
// stack add up to the site's acquisitions, in trace mode too (whose fast path once skipped the
// stacks). A value it does not know is refused in one line.
TEST(Stacks, StacksAllCountsEveryAcquisitionByItsWholeStack) {
  TemporaryDirectory traced;
  const CommandResult traced_run =
      run_lockscope({"record", "-o", traced.path(), "--trace", "--stacks", "all", "--",
                     fixture("wrapped_locks"), "50"});
  ASSERT_EQ(traced_run.exit_status, 0) << traced_run.err;
  TemporaryDirectory dir;
  const CommandResult recorded = run_lockscope(
      {"record", "-o", dir.path(), "--stacks", "all", "--", fixture("wrapped_locks"), "50"});
  ASSERT_EQ(recorded.exit_status, 0) << recorded.err;
  for (const std::string& path : {traced.path(), dir.path()}) {
    SCOPED_TRACE(path);
    const Profile profile = load_profile(path);
    ASSERT_EQ(profile.processes.size(), 1u);
    const ProcessProfile& process = profile.processes[0];
    const FoundSite lock = find_site(process, "wrapped_locks", "level3", Operation::kLock);
    ASSERT_NE(lock.site, nullptr);
    EXPECT_EQ(lock.site->acquisitions(), 100u);
    uint64_t counted = 0;
    for (const SiteStack& row : lock.site->acquire_stacks) {
      counted += row.waits;
      ASSERT_LT(row.stack, process.stacks.size());
      expect_wrapped_locks_stack(process.stacks[row.stack], "level3");
    }
    EXPECT_EQ(counted, lock.site->acquisitions());
  }
  const CommandResult json_run = run_lockscope({"report", "-f", "json", dir.path()});
  ASSERT_EQ(json_run.exit_status, 0) << json_run.err;
  EXPECT_NE(json_run.out.find("\"acquire_stacks\""), std::string::npos);

  const CommandResult refused = run_lockscope(
      {"record", "-o", dir.path(), "--stacks", "some", "--", fixture("wrapped_locks"), "1"});
  EXPECT_EQ(refused.exit_status, 125);
  EXPECT_NE(refused.err.find("--stacks"), std::string::npos) << refused.err;
}

// --stack-depth 0 records no stacks, and the frame-pointer walk alone stops at the first frame
// without one (here: at once), keeping only the call site.
TEST(Stacks, StackDepthZeroRecordsNoneAndFramePointersAloneStopEarly) {
  TemporaryDirectory off;
  const CommandResult none = run_lockscope(
      {"record", "-o", off.path(), "--stack-depth", "0", "--", fixture("wrapped_locks"), "50"});
  ASSERT_EQ(none.exit_status, 0) << none.err;
  for (const ProcessProfile& process : load_profile(off.path()).processes)
    EXPECT_TRUE(process.stacks.empty());
  TemporaryDirectory fp;
  const CommandResult walked = run_lockscope(
      {"record", "-o", fp.path(), "--unwind", "fp", "--", fixture("wrapped_locks"), "50"});
  ASSERT_EQ(walked.exit_status, 0) << walked.err;
  for (const ProcessProfile& process : load_profile(fp.path()).processes)
    for (const auto& stack : process.stacks) EXPECT_LT(stack.size(), 4u);
}

// The JSON report's waits on the fixture's lock, attributed by `options`: every contended wait
// (all have stacks at 100 us holds) lands on the thread function's call of the wrappers, and the
// rows add up to the lock's contended count; the text report says the same.
void expect_waits_attributed_to_worker(const std::vector<std::string>& options) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "wrapped_locks", {"100"});
  const FoundSite wait = find_site(process, "wrapped_locks", "level3", Operation::kLock);
  ASSERT_NE(wait.lock, nullptr);
  ASSERT_GT(wait.lock->contended, 0u);
  std::vector<std::string> args = {"report", "-f", "json", dir.path()};
  args.insert(args.end(), options.begin(), options.end());
  const CommandResult json_run = run_lockscope(args);
  ASSERT_EQ(json_run.exit_status, 0) << json_run.err;
  const auto document = nlohmann::json::parse(json_run.out);
  EXPECT_TRUE(document.contains("wait_attribution")) << json_run.out.substr(0, 400);
  const nlohmann::json* lock = nullptr;
  for (const auto& candidate : document["processes"][0]["locks"])
    if (candidate["address"] == wait.lock->address) lock = &candidate;
  ASSERT_NE(lock, nullptr);
  const int worker_line = marker_line("wrapped_locks", "worker");
  uint64_t attributed = 0;
  for (const auto& row : (*lock)["attributed_waits"]) {
    EXPECT_EQ(row["frame"].value("function", ""), "worker") << row.dump();
    EXPECT_EQ(row["frame"].value("line", 0), worker_line) << row.dump();
    attributed += row["waits"].get<uint64_t>();
  }
  EXPECT_EQ((*lock)["waits_without_stack"]["waits"], 0u);
  EXPECT_EQ(attributed, wait.lock->contended);

  args[2] = "text";
  const CommandResult text = run_lockscope(args);
  ASSERT_EQ(text.exit_status, 0) << text.err;
  EXPECT_EQ(text.err.find("matched no frame"), std::string::npos) << text.err;
  const size_t at = text.out.find("contended waits by caller outside the wrappers");
  ASSERT_NE(at, std::string::npos) << text.out;
  const std::string section = text.out.substr(at, text.out.find("\n\n", at) - at);
  EXPECT_NE(section.find("100.0 %  "), std::string::npos) << section;
  EXPECT_NE(section.find(fmt::format("in {} wait{}  worker ", wait.lock->contended,
                                     wait.lock->contended == 1 ? "" : "s")),
            std::string::npos)
      << section;
  EXPECT_NE(section.find(fmt::format("wrapped_locks.c:{}\n", worker_line)), std::string::npos)
      << section;
  EXPECT_NE(section.find(
                fmt::format("0 of {} contended waits had no captured stack", wait.lock->contended)),
            std::string::npos)
      << section;
}

TEST(Stacks, SkipFramesAttributesEveryWaitPastTheWrappersToTheThreadFunction) {
  expect_waits_attributed_to_worker(
      {"--skip-frames", "^(take_and_work|with_lock|guarded_update)$"});
}

TEST(Stacks, CallerDepthThreeAttributesEveryWaitToTheThreadFunction) {
  expect_waits_attributed_to_worker({"--caller-depth", "3"});
}

// Two levels out, then past the one wrapper left: the same frame.
TEST(Stacks, CallerDepthThenSkipFramesCombine) {
  expect_waits_attributed_to_worker({"--caller-depth", "2", "--skip-frames", "^guarded_"});
}

// A --skip-frames pattern that names no function of the program (a typo: `^with_lok$`) left
// every wait at its innermost frame, the wrapper, in rows that look like a pattern's that worked.
// One warning line says so, after the report, for `report` in any format and for `run`.
TEST(Stacks, SkipFramesThatMatchesNoFrameSaysSo) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "wrapped_locks", {"100"});
  std::map<size_t, uint64_t> waits_by_stack;  // the stacks of contended waits
  for (const LockSummary& lock : process.locks)
    for (const SiteSummary& site : lock.sites)
      if (site.contended > 0 && counts_as_acquisition(site.operation))
        for (const SiteStack& row : site.stacks) waits_by_stack[row.stack] += row.waits;
  const size_t stacks = waits_by_stack.size();
  ASSERT_GT(stacks, 0u);
  const std::string warning = fmt::format(
      "lockscope: warning: --skip-frames '^with_lok$' matched no frame of the {} stack{} of "
      "contended waits: waits are attributed to ",
      stacks, stacks == 1 ? "" : "s");
  for (const char* format : {"text", "json"}) {
    const CommandResult report =
        run_lockscope({"report", dir.path(), "-f", format, "--skip-frames", "^with_lok$"});
    EXPECT_EQ(report.exit_status, 0) << report.err;
    EXPECT_EQ(report.err, warning + "their innermost frame\n") << format;
  }
  const CommandResult deeper =
      run_lockscope({"report", dir.path(), "--caller-depth", "2", "--skip-frames", "^with_lok$"});
  EXPECT_EQ(deeper.err,
            warning + "the frame 2 calls out from their call site (--caller-depth 2)\n");
  // `run`: the line comes after the report, on the same stderr.
  TemporaryDirectory again;
  const CommandResult run = run_lockscope({"run", "-o", again.path(), "--skip-frames", "^with_lok$",
                                           "--", fixture("wrapped_locks"), "100"});
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_NE(run.err.find("contended waits by caller outside the wrappers"), std::string::npos);
  const size_t at = run.err.find("lockscope: warning: --skip-frames '^with_lok$' matched no frame");
  ASSERT_NE(at, std::string::npos) << run.err;
  EXPECT_EQ(run.err.find('\n', at), run.err.size() - 1) << "the last line: " << run.err;
}

// A coroutine's stack, mmap'd below the thread's, with a guard region above it and the frame
// pointer register pointing there: the frame-pointer walk stops at the coroutine's stack instead
// of reading the guard region (it took anything within 1 GiB below the thread's descriptor for
// the thread's stack: SIGSEGV with --unwind fp, every run). On the main thread too, whose
// descriptor is in the mmap area, beside the stacks a coroutine library maps.
TEST(Stacks, AWaitOnACoroutinesStackNeverWalksOffIt) {
  for (const char* thread : {"worker", "main"})
    for (const char* unwind : {"fp", "auto"}) {
      TemporaryDirectory dir;
      const ProcessProfile process = record_program_unchanged(
          dir, {fixture("coroutine_stack"), "20", thread}, nullptr, nullptr, {"--unwind", unwind});
      const FoundSite wait =
          find_site(process, "coroutine_stack", "coroutine-lock", Operation::kLock);
      ASSERT_NE(wait.site, nullptr) << thread << " " << unwind;
      EXPECT_EQ(wait.site->count, 20u) << thread << " " << unwind;
      // The frame-pointer walk stops there; the unwind tables still see the coroutine's frames.
      if (std::string(unwind) == "auto") {
        EXPECT_FALSE(wait.site->stacks.empty()) << thread;
      }
    }
}

}  // namespace
}  // namespace lockscope::testing
