// Who made a thread wait: each contended acquisition is blamed on the acquire site of the hold it
// waited behind.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

using format::Operation;

// The main thread holds a mutex for 2 ms at one site while the waiter blocks at another, 20 times:
// the waits are blamed on the holder's site (at least 95 % of the measured wait, as the issue
// asks; here all of it, the first wait included), in the profile, the text and the JSON report.
TEST(Blame, WaitsBehindASleepingHolderAreBlamedOnItsSite) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "sleepy_holder", {"20"});
  const FoundSite waiter = find_site(process, "sleepy_holder", "waiter-lock", Operation::kLock);
  ASSERT_NE(waiter.site, nullptr);
  ASSERT_EQ(waiter.site->contended, 20u);
  const int holder_line = marker_line("sleepy_holder", "holder-lock");
  uint64_t blamed_on_holder = 0, blamed_waits = 0, all_blamed = 0;
  for (const Blame& row : waiter.site->blame) {
    all_blamed += row.wait_ns;
    if (located_at(row.holder_site, "sleepy_holder.c", holder_line)) {
      blamed_on_holder += row.wait_ns;
      blamed_waits += row.waits;
    }
  }
  EXPECT_EQ(all_blamed, waiter.site->wait_sum_ns) << "every contended wait is in one blame row";
  EXPECT_GE(blamed_on_holder, waiter.site->wait_sum_ns * 95 / 100);
  EXPECT_EQ(blamed_waits, 20u);
  // ... and on the holder's stack, taken at its release in main, and each from the waiter's own.
  const int unlock_line = marker_line("sleepy_holder", "holder-unlock");
  const int waiter_line = marker_line("sleepy_holder", "waiter-lock");
  uint64_t blamed_on_stack = 0;
  for (const Blame& row : waiter.site->blame) {
    ASSERT_LT(row.waiter_stack, process.stacks.size()) << "every wait's stack was captured";
    EXPECT_TRUE(
        located_at(process.stacks[row.waiter_stack].front(), "sleepy_holder.c", waiter_line));
    if (row.holder_stack >= process.stacks.size()) continue;
    const std::vector<CodeLocation>& holder = process.stacks[row.holder_stack];
    if (located_at(row.holder_site, "sleepy_holder.c", holder_line) &&
        located_at(holder.front(), "sleepy_holder.c", unlock_line))
      blamed_on_stack += row.wait_ns;
  }
  EXPECT_GE(blamed_on_stack, waiter.site->wait_sum_ns * 95 / 100);
  // The holder's own site waited for no one, so it blames no one.
  const FoundSite holder = find_site(process, "sleepy_holder", "holder-lock", Operation::kLock);
  ASSERT_NE(holder.site, nullptr);
  EXPECT_TRUE(holder.site->blame.empty());

  const CommandResult text = run_lockscope({"report", dir.path()});
  ASSERT_EQ(text.exit_status, 0) << text.err;
  EXPECT_NE(text.out.find("were behind holds taken at:"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("sleepy_holder.c:" + std::to_string(holder_line)), std::string::npos);
  EXPECT_NE(text.out.find("stacks of the holds they waited behind ("), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("(stack at its release)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("sleepy_holder.c:" + std::to_string(unlock_line)), std::string::npos);

  const CommandResult json_run = run_lockscope({"report", "-f", "json", dir.path()});
  ASSERT_EQ(json_run.exit_status, 0) << json_run.err;
  const auto document = nlohmann::json::parse(json_run.out);
  uint64_t json_waits = 0, json_holder_stacks = 0;
  const auto& stacks = document["processes"][0]["stacks"];
  for (const auto& lock : document["processes"][0]["locks"])
    for (const auto& site : lock["sites"])
      if (site.contains("waited_behind"))
        for (const auto& row : site["waited_behind"]) {
          json_waits += row["waits"].get<uint64_t>();
          if (row["holder_stack"].is_null()) continue;
          ASSERT_LT(row["holder_stack"].get<size_t>(), stacks.size());
          json_holder_stacks += row["waits"].get<uint64_t>();
        }
  EXPECT_EQ(json_waits, 20u);
  EXPECT_GE(json_holder_stacks, 19u);
}

// One contended wait at the `waiter` marker of `fixture`, blamed on the hold taken at `holder`.
void expect_one_wait_blamed_on(const ProcessProfile& process, const std::string& fixture,
                               const std::string& waiter, const std::string& holder) {
  const FoundSite found = find_site(process, fixture, waiter, Operation::kLock);
  ASSERT_NE(found.site, nullptr);
  ASSERT_EQ(found.site->contended, 1u);
  ASSERT_EQ(found.site->blame.size(), 1u);
  EXPECT_EQ(found.site->blame[0].waits, 1u);
  EXPECT_TRUE(
      located_at(found.site->blame[0].holder_site, fixture + ".c", marker_line(fixture, holder)));
}

// A lock's first wait, behind a hold that is not timed (so its release does not look for waiters
// in the lock's slot): the release still sees the waiter in the mutex's own lock word and names
// the hold for it. With 1-in-8 sampling the site's first 8 holds are timed, then its 9th, 17th,
// ..., 201st: the 201 warm-up holds leave the waited-for 202nd untimed.
TEST(Blame, AFirstWaitBehindAnUntimedHoldIsBlamedOnItsSite) {
  TemporaryDirectory dir;
  expect_one_wait_blamed_on(
      record_unchanged(dir, "sleepy_holder", {"1", "201"}, {"--hold-sample", "8"}), "sleepy_holder",
      "waiter-lock", "holder-lock");
}

// A thread blocked on a mutex whose holder lets go of it inside pthread_cond_wait (glibc's own
// unlock, which the runtime does not see): the wait is blamed on the hold the condition wait ended.
TEST(Blame, AWaitForAMutexAConditionWaitLetGoOfIsBlamedOnItsHold) {
  TemporaryDirectory dir;
  expect_one_wait_blamed_on(record_unchanged(dir, "condvar_hold", {"contended"}), "condvar_hold",
                            "producer-lock", "consumer-lock");
}

// Through wrappers, in code without frame pointers: each wait is blamed on the other thread's hold
// with that hold's whole stack, through the three wrappers to the thread function: from its lock
// when that hold's acquisition waited too and kept its stack, else from its unlock; and the
// waiter's stack the same way from its lock.
TEST(Blame, HolderStacksNameTheWrappersTheHoldCameThrough) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "wrapped_locks", {"100"});
  const FoundSite wait = find_site(process, "wrapped_locks", "level3", Operation::kLock);
  ASSERT_NE(wait.site, nullptr);
  ASSERT_GT(wait.site->contended, 0u);
  uint64_t with_holder_stack = 0, with_waiter_stack = 0, blamed = 0, holder_unknown = 0;
  for (const Blame& row : wait.site->blame) {
    blamed += row.waits;
    // Both threads start each round together: a waiter whose holder released before its wait was
    // seen has no holder (the report's "not known" row).
    if (!row.holder_site.known()) {
      holder_unknown += row.waits;
      continue;
    }
    EXPECT_TRUE(
        located_at(row.holder_site, "wrapped_locks.c", marker_line("wrapped_locks", "level3")))
        << row.holder_site.label;
    if (row.holder_stack >= process.stacks.size()) continue;
    with_holder_stack += row.waits;
    expect_wrapped_locks_stack(process.stacks[row.holder_stack],
                               row.holder_stack_at_acquire ? "level3" : "level3-unlock");
    if (row.waiter_stack >= process.stacks.size()) continue;  // the waiter's budget was spent
    with_waiter_stack += row.waits;
    expect_wrapped_locks_stack(process.stacks[row.waiter_stack], "level3");
  }
  EXPECT_EQ(blamed, wait.site->contended);
  // The lock's first wait has no holder stack (its holder had not been asked for one); at 100 us
  // holds the capture budget covers every other.
  EXPECT_LE(holder_unknown * 10, wait.site->contended);
  EXPECT_GE(with_holder_stack + holder_unknown + 1, wait.site->contended);
  EXPECT_GE(with_waiter_stack * 10, with_holder_stack * 9);
}

// Where each contended lock came from: a holder pinned to CPU 0 and a waiter pinned to CPU 1 (or
// both to CPU 0). Every contended acquisition but the lock's first (its holder had not been asked
// to say its CPU) is counted as from another CPU (or the same one), in the site and the lock.
void expect_handoffs_from(const char* mode, bool cross) {
  TemporaryDirectory dir;
  CommandResult recorded;
  const ProcessProfile process =
      record_program_unchanged(dir, {fixture("cpu_handoffs"), mode, "10"}, nullptr, &recorded);
  if (recorded.out.find("unpinned") != std::string::npos) GTEST_SKIP() << "needs two CPUs";
  const FoundSite waiter = find_site(process, "cpu_handoffs", "waiter-lock", Operation::kLock);
  ASSERT_NE(waiter.site, nullptr);
  ASSERT_EQ(waiter.site->contended, 10u);
  const uint64_t expected =
      cross ? waiter.site->cross_cpu_handoffs : waiter.site->same_cpu_handoffs;
  const uint64_t other = cross ? waiter.site->same_cpu_handoffs : waiter.site->cross_cpu_handoffs;
  EXPECT_GE(expected, 9u);
  EXPECT_EQ(other, 0u);
  EXPECT_EQ(cross ? waiter.lock->cross_cpu_handoffs : waiter.lock->same_cpu_handoffs, expected);
}

TEST(CpuHandoffs, ALockWaitedForOnAnotherCpuComesFromThere) {
  expect_handoffs_from("cross", true);
}
TEST(CpuHandoffs, ALockWaitedForOnTheSameCpuStaysThere) {
  expect_handoffs_from("same", false);
}

// Regression: a recursive mutex re-taken inside its outer hold goes on being that hold: waits
// behind it are blamed on the outer line (before, on the short inner re-take's).
TEST(Blame, WaitsBehindARecursiveMutexAreBlamedOnItsOuterHold) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "recursive_blame", {"3"});
  const FoundSite waiter = find_site(process, "recursive_blame", "waiter", Operation::kLock);
  ASSERT_NE(waiter.site, nullptr);
  ASSERT_EQ(waiter.site->contended, 3u);
  uint64_t outer = 0;
  for (const Blame& row : waiter.site->blame) {
    EXPECT_FALSE(
        located_at(row.holder_site, "recursive_blame.c", marker_line("recursive_blame", "inner")))
        << row.holder_site.label;
    if (located_at(row.holder_site, "recursive_blame.c", marker_line("recursive_blame", "outer")))
      outer += row.waits;
  }
  EXPECT_EQ(outer, 3u);
}

// Regression: a CPU value written for a waiter that timed out is not taken by the next contended
// acquisition, whose releaser (a condition wait, inside glibc) wrote none.
TEST(CpuHandoffs, AValueLeftByATimedOutWaiterIsNotAnotherHandoffs) {
  TemporaryDirectory dir;
  CommandResult recorded;
  const ProcessProfile process =
      record_program_unchanged(dir, {fixture("stale_cpu")}, nullptr, &recorded);
  if (recorded.err.find("timed waiter: timed out") == std::string::npos)
    GTEST_SKIP() << "the timed waiter got the lock: no value was left behind";
  const FoundSite w = find_site(process, "stale_cpu", "w", Operation::kLock);
  ASSERT_NE(w.site, nullptr);
  ASSERT_EQ(w.site->contended, 1u);
  EXPECT_EQ(w.site->cross_cpu_handoffs + w.site->same_cpu_handoffs, 0u);
}

}  // namespace
}  // namespace lockscope::testing
