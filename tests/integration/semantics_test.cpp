// The runtime never changes behaviour: same output, same return codes, same errno.
#include <gtest/gtest.h>

#include <cstdio>

#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

using format::Operation;

TEST(Semantics, EveryMutexKindReturnsTheSameCodesUnderTheRuntime) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "mutex_semantics");
  const int trylock_line = marker_line("mutex_semantics", "busy-trylock");
  const LockSummary* busy = lock_acquired_at(process, "mutex_semantics.c", trylock_line);
  ASSERT_NE(busy, nullptr);
  const SiteSummary* trylock =
      site_at(*busy, "mutex_semantics.c", trylock_line, Operation::kTryLock);
  ASSERT_NE(trylock, nullptr);
  EXPECT_EQ(trylock->count, 3u);
  EXPECT_EQ(trylock->failed, 3u) << "EBUSY trylocks are failed acquisitions";
  const int timed_line = marker_line("mutex_semantics", "busy-timedlock");
  const SiteSummary* timed = site_at(*busy, "mutex_semantics.c", timed_line, Operation::kTimedLock);
  ASSERT_NE(timed, nullptr);
  EXPECT_EQ(timed->failed, 1u);
  EXPECT_GE(timed->wait_sum_ns, 500'000u) << "a timed-out wait is still a wait";
  // The one lock first waited for is busy_mutex (the timed lock above): an error-checking mutex
  // relocked by its owner (EDEADLK at once) waited for no one.
  EXPECT_EQ(process.counter(format::Counter::kBlockingHoldsUntimed), 1u);

  // The recursive mutex: kind from its init, destroyed, init site at the fixture's line.
  const int init_line = marker_line("mutex_semantics", "recursive-init");
  bool found_recursive = false;
  for (const LockSummary& lock : process.locks) {
    if (lock.kind != format::MutexKind::kRecursive) continue;
    found_recursive = true;
    EXPECT_EQ(lock.init_site.line, init_line);
    EXPECT_TRUE(lock.flags & format::kLockDestroyed);
    EXPECT_EQ(lock.acquisitions, 3u);
    EXPECT_EQ(lock.releases, 3u);
  }
  EXPECT_TRUE(found_recursive);
  bool found_errorcheck = false;
  for (const LockSummary& lock : process.locks) {
    if (lock.kind != format::MutexKind::kErrorCheck) continue;
    found_errorcheck = true;
    EXPECT_EQ(lock.acquisitions, 1u);
    EXPECT_EQ(lock.failed, 2u) << "EDEADLK relock and EBUSY trylock";
  }
  EXPECT_TRUE(found_errorcheck);
}

// A primitive only destroyed, never used, is no lock of the report (each was one of kind "mutex",
// whatever it was); a used one keeps its figures and is marked destroyed.
TEST(Semantics, APrimitiveOnlyDestroyedIsNoLockOfTheReport) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "destroy_unused");
  ASSERT_EQ(process.locks.size(), 1u);
  EXPECT_TRUE(process.locks[0].flags & format::kLockDestroyed);
  const FoundSite used = find_site(process, "destroy_unused", "used", Operation::kLock);
  ASSERT_NE(used.site, nullptr);
  EXPECT_EQ(used.site->count, 1u);
}

// A deadline glibc refuses (tv_nsec out of range; a clock it cannot wait on) is EINVAL and no
// lock, as plain, even on a free lock: before, lockscope's trylock-first took it and answered 0.
// Each refused call is a failed one; the accepted ones (the valid deadline, a free mutex's
// timedlock, the timed forms' own clock) are acquisitions.
TEST(Semantics, ADeadlineGlibcRefusesIsRefusedUnderTheRuntime) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "bad_deadlines");
  // 7 rounds: valid, two bad tv_nsec, four refused clocks.
  const struct {
    const char* marker;
    Operation op;
    uint64_t acquired, failed;
  } expected[] = {
      {"mutex-clock", Operation::kClockLock, 3, 4},
      {"mutex-timed", Operation::kTimedLock, 7, 0},
      {"read-timed", Operation::kTimedReadLock, 5, 2},
      {"read-clock", Operation::kClockReadLock, 1, 6},
      {"write-timed", Operation::kTimedWriteLock, 5, 2},
      {"write-clock", Operation::kClockWriteLock, 1, 6},
      {"sem-timed", Operation::kSemTimedWait, 5, 2},
      {"sem-clock", Operation::kSemClockWait, 1, 6},
  };
  for (const auto& row : expected) {
    const FoundSite found = find_site(process, "bad_deadlines", row.marker, row.op);
    ASSERT_NE(found.site, nullptr) << row.marker;
    EXPECT_EQ(found.site->count, row.acquired + row.failed) << row.marker;
    EXPECT_EQ(found.site->failed, row.failed) << row.marker;
  }
}

}  // namespace
}  // namespace lockscope::testing

namespace lockscope::testing {
namespace {

// A timed-out timedlock waited (failed, not contended): its stack is shown, and counted among
// the waits of its site, so "N of M waits captured" never has N > M (a server's timed locks
// read "423 of 19"), and a site whose every wait timed out still shows where it waited from.
TEST(Semantics, ATimedOutWaitsStackIsShownAndCountedAmongTheWaits) {
  TemporaryDirectory dir;
  record_unchanged(dir, "mutex_semantics");
  const CommandResult report = run_lockscope({"report", "--all", dir.path()});
  ASSERT_EQ(report.exit_status, 0) << report.err;
  const std::string line =
      "mutex_semantics.c:" + std::to_string(marker_line("mutex_semantics", "busy-timedlock"));
  const size_t at = report.out.find("stacks of the waits at main ");
  ASSERT_NE(at, std::string::npos) << report.out;
  const std::string header = report.out.substr(at, report.out.find('\n', at) - at);
  EXPECT_NE(header.find(line + " (1 of 1 waits captured)"), std::string::npos) << header;
}

// A lock held again inside its own hold (a recursive mutex locked 5 deep, a read lock taken twice,
// each held ~100 ms) is held once, for that long: each level counted the whole, and the mutex
// showed 503 ms held in a 100 ms span, labelled exact. The fixture measured each span itself.
TEST(Semantics, ALockHeldAgainInsideItsOwnHoldIsHeldOnceForItsTime) {
  for (const char* mode : {"summary", "trace"}) {
    SCOPED_TRACE(mode);
    TemporaryDirectory dir;
    CommandResult recorded;
    const ProcessProfile process = record_program_unchanged(
        dir, {fixture("recursive_holds")}, nullptr, &recorded, record_options_for(mode));
    long long mutex_span = 0, read_span = 0;
    const size_t at = recorded.err.find("spans mutex ");
    ASSERT_NE(at, std::string::npos) << recorded.err;
    std::sscanf(recorded.err.c_str() + at, "spans mutex %lld read %lld", &mutex_span, &read_span);
    const FoundSite mutex =
        find_site(process, "recursive_holds", "recursive-lock", Operation::kLock);
    ASSERT_NE(mutex.site, nullptr);
    EXPECT_EQ(mutex.site->count, 5u);
    EXPECT_GE(mutex.site->hold_sum_ns, 100 * kMs);
    EXPECT_LE(mutex.site->hold_sum_ns, static_cast<uint64_t>(mutex_span));
    const FoundSite outer =
        find_site(process, "recursive_holds", "outer-read", Operation::kReadLock);
    const FoundSite inner =
        find_site(process, "recursive_holds", "inner-read", Operation::kReadLock);
    ASSERT_NE(outer.site, nullptr);
    ASSERT_NE(inner.site, nullptr);
    EXPECT_GE(outer.site->hold_sum_ns, 100 * kMs);
    EXPECT_LE(outer.site->hold_sum_ns + inner.site->hold_sum_ns, static_cast<uint64_t>(read_span));
  }
}

}  // namespace
}  // namespace lockscope::testing
