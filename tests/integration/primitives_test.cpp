// Spinlocks, semaphores, barriers, robust and PI mutexes under the real runtime (rwlocks:
// rwlock_test.cpp; condition variables: condvar_split_test.cpp):
// each fixture's own output and exit status are unchanged, and every call site (found by its
// "// @marker" line) has exactly the counts, failures, waits and qualifiers the fixture produces.
#include <gtest/gtest.h>

#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

using format::Operation;
using format::Primitive;

// ---------------------------------------------------------------------------------------------
// Spinlocks.

TEST(Primitives, SpinLockCountsTryLockFailuresAndSpinTime) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "spin_counter", {"2000"});
  const std::string f = "spin_counter";
  const FoundSite counting = find_site(process, f, "spin-lock", Operation::kSpinLock);
  ASSERT_NE(counting.site, nullptr);
  EXPECT_EQ(counting.lock->primitive, Primitive::kSpinLock);
  EXPECT_EQ(lock_kind_name(*counting.lock), "spinlock");
  EXPECT_EQ(counting.lock->init_site.line, marker_line(f, "spin-init"));
  EXPECT_EQ(counting.site->count, 4000u);
  EXPECT_EQ(counting.site->failed, 0u);
  EXPECT_EQ(counting.site->location.function, "count_up");
  const SiteSummary* unlocks = site_of(*counting.lock, f, "spin-unlock", Operation::kUnlock);
  ASSERT_NE(unlocks, nullptr);
  EXPECT_EQ(unlocks->count, 4000u);
  EXPECT_EQ(counting.lock->acquisitions, 4000u);
  EXPECT_EQ(counting.lock->releases, 4000u);
  EXPECT_EQ(counting.lock->wait.total(), 4000u);

  const FoundSite held = find_site(process, f, "main-spin-lock", Operation::kSpinLock);
  ASSERT_NE(held.site, nullptr);
  EXPECT_NE(held.lock, counting.lock);
  EXPECT_EQ(held.site->count, 1u);
  for (const char* marker : {"spin-trylock-busy", "spin-trylock-busy-2"}) {
    const SiteSummary* busy = site_of(*held.lock, f, marker, Operation::kSpinTryLock);
    ASSERT_NE(busy, nullptr) << marker;
    EXPECT_EQ(busy->count, 1u) << marker;
    EXPECT_EQ(busy->failed, 1u) << marker << ": EBUSY is a failed trylock";
  }
  const SiteSummary* free_try =
      site_of(*held.lock, f, "spin-trylock-free", Operation::kSpinTryLock);
  ASSERT_NE(free_try, nullptr);
  EXPECT_EQ(free_try->failed, 0u);
  const SiteSummary* spinner = site_of(*held.lock, f, "spin-behind-holder", Operation::kSpinLock);
  ASSERT_NE(spinner, nullptr);
  EXPECT_EQ(spinner->count, 1u);
  EXPECT_EQ(spinner->contended, 1u);
  EXPECT_GE(spinner->wait_sum_ns, 2 * kMs) << "main held it ~3 ms while the spinner spun";
  EXPECT_EQ(held.lock->acquisitions, 3u);
  EXPECT_EQ(held.lock->failed, 2u);
  EXPECT_EQ(held.lock->contended, 1u);
  EXPECT_GE(most_waited(process, Primitive::kSpinLock), 2 * kMs);
}

// ---------------------------------------------------------------------------------------------
// Semaphores.

TEST(Primitives, SemaphoreWaitsPostsAndFailuresUnnamedAndNamed) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "semaphores", {"100"});
  const std::string f = "semaphores";
  const FoundSite waits = find_site(process, f, "items-wait", Operation::kSemWait);
  ASSERT_NE(waits.site, nullptr);
  const LockSummary& items = *waits.lock;
  EXPECT_EQ(items.primitive, Primitive::kSemaphore);
  EXPECT_EQ(lock_kind_name(items), "semaphore");
  EXPECT_EQ(items.capacity, 2u) << "sem_init's initial value";
  EXPECT_EQ(items.init_site.line, marker_line(f, "items-init"));
  EXPECT_EQ(waits.site->count, 102u);
  EXPECT_EQ(waits.site->failed, 0u);
  // A semaphore wait holds nothing: no thread acquisitions, nothing left on the held-lock stack.
  EXPECT_EQ(process.counter(format::Counter::kHeldStackOverflow), 0u);
  EXPECT_EQ(process.counter(format::Counter::kUnbalancedUnlocks), 0u);
  for (const ThreadSummary& thread : process.threads) EXPECT_EQ(thread.acquisitions, 0u);
  const SiteSummary* posts = site_of(items, f, "items-post", Operation::kSemPost);
  ASSERT_NE(posts, nullptr);
  EXPECT_EQ(posts->count, 100u);
  EXPECT_EQ(posts->location.function, "produce");
  struct Expected {
    const char* marker;
    Operation op;
    uint64_t failed;
  };
  for (const Expected& e : {Expected{"items-trywait", Operation::kSemTryWait, 1},      // EAGAIN
                            Expected{"items-timedwait", Operation::kSemTimedWait, 1},  // ETIMEDOUT
                            Expected{"items-clockwait", Operation::kSemClockWait, 1},  // ETIMEDOUT
                            Expected{"items-post-errno", Operation::kSemPost, 0},
                            Expected{"items-wait-errno", Operation::kSemWait, 0}}) {
    SCOPED_TRACE(e.marker);
    const SiteSummary* site = site_of(items, f, e.marker, e.op);
    ASSERT_NE(site, nullptr);
    EXPECT_EQ(site->count, 1u);
    EXPECT_EQ(site->failed, e.failed);
  }
  EXPECT_GE(site_of(items, f, "items-timedwait", Operation::kSemTimedWait)->wait_sum_ns, 1 * kMs)
      << "a timed-out wait is still a wait";
  EXPECT_GE(site_of(items, f, "items-clockwait", Operation::kSemClockWait)->wait_sum_ns, 1 * kMs);
  EXPECT_EQ(items.acquisitions, 103u) << "completed waits";
  EXPECT_EQ(items.failed, 3u);
  EXPECT_EQ(items.events, 101u) << "posts";

  const FoundSite gate = find_site(process, f, "gate-wait", Operation::kSemWait);
  ASSERT_NE(gate.site, nullptr);
  EXPECT_NE(gate.lock, waits.lock);
  EXPECT_EQ(gate.lock->capacity, 0u);
  EXPECT_EQ(gate.site->count, 1u);
  EXPECT_EQ(gate.site->contended, 1u);
  EXPECT_GE(gate.site->wait_sum_ns, 2 * kMs) << "main posted ~2 ms after the waiter blocked";
  const SiteSummary* gate_post = site_of(*gate.lock, f, "gate-post", Operation::kSemPost);
  ASSERT_NE(gate_post, nullptr);
  EXPECT_EQ(gate_post->count, 1u);
  EXPECT_EQ(gate_post->with_waiters, 1u) << "the gate waiter was blocked when main posted";
  const SiteSummary* lonely_post = site_of(items, f, "items-post-errno", Operation::kSemPost);
  ASSERT_NE(lonely_post, nullptr);
  EXPECT_EQ(lonely_post->without_waiters, 1u) << "nobody waited on items then";
  EXPECT_GE(most_waited(process, Primitive::kSemaphore), 2 * kMs);

  const FoundSite named = find_site(process, f, "named-wait", Operation::kSemWait);
  ASSERT_NE(named.site, nullptr);
  EXPECT_EQ(named.lock->primitive, Primitive::kSemaphore);
  EXPECT_EQ(named.site->count, 3u);
  const SiteSummary* named_last = site_of(*named.lock, f, "named-wait-last", Operation::kSemWait);
  const SiteSummary* named_post = site_of(*named.lock, f, "named-post", Operation::kSemPost);
  const SiteSummary* named_try = site_of(*named.lock, f, "named-trywait", Operation::kSemTryWait);
  ASSERT_NE(named_last, nullptr);
  ASSERT_NE(named_post, nullptr);
  ASSERT_NE(named_try, nullptr);
  EXPECT_EQ(named_last->count, 1u);
  EXPECT_EQ(named_post->count, 3u);
  EXPECT_EQ(named_try->count, 1u);
  EXPECT_EQ(named_try->failed, 1u) << "EAGAIN";
  EXPECT_EQ(named.lock->acquisitions, 4u);
  EXPECT_EQ(named.lock->events, 3u);
  EXPECT_TRUE(named.lock->flags & format::kLockProcessShared)
      << "a named semaphore is shared memory";
  EXPECT_EQ(lock_kind_name(*named.lock), "semaphore+pshared");
}

// ---------------------------------------------------------------------------------------------
// Barriers.

TEST(Primitives, BarrierWaitIsLoadImbalanceAndTheLateThreadArrivesLast) {
  TemporaryDirectory dir;
  const int rounds = 10;
  const ProcessProfile process = record_unchanged(dir, "barrier_rounds", {std::to_string(rounds)});
  const std::string f = "barrier_rounds";
  const FoundSite waits = find_site(process, f, "barrier-wait", Operation::kBarrierWait);
  ASSERT_NE(waits.site, nullptr);
  const LockSummary& barrier = *waits.lock;
  EXPECT_EQ(barrier.primitive, Primitive::kBarrier);
  EXPECT_EQ(barrier.capacity, 3u);
  EXPECT_EQ(lock_kind_name(barrier), "barrier(3)");
  EXPECT_EQ(barrier.init_site.line, marker_line(f, "barrier-init"));
  EXPECT_EQ(waits.site->count, 3u * rounds);
  EXPECT_EQ(waits.site->failed, 0u);
  EXPECT_EQ(waits.site->arrived_last, unsigned(rounds));
  EXPECT_EQ(barrier.acquisitions, 3u * rounds);
  // Two threads wait ~5 ms a round for the late one.
  EXPECT_GE(waits.site->wait_sum_ns, 2ull * rounds * 4 * kMs);

  int named = 0;
  for (const ThreadSummary& thread : process.threads) {
    const uint64_t barrier_wait =
        thread.wait_ns_by_primitive[static_cast<size_t>(Primitive::kBarrier)];
    SCOPED_TRACE(thread.name);
    if (thread.name == "late") {
      ++named;
      EXPECT_EQ(thread.barrier_last_arrivals, unsigned(rounds));
      EXPECT_LT(barrier_wait, rounds * kMs) << "the last to arrive never waits";
    } else if (thread.name == "early-1" || thread.name == "early-2") {
      ++named;
      EXPECT_EQ(thread.barrier_last_arrivals, 0u);
      EXPECT_GE(barrier_wait, rounds * 4 * kMs);
    } else {
      EXPECT_EQ(thread.barrier_last_arrivals, 0u);
      EXPECT_EQ(barrier_wait, 0u);
    }
    EXPECT_EQ(thread.wait_ns_by_primitive[static_cast<size_t>(Primitive::kMutex)], 0u)
        << "barrier waits are never counted as mutex waits";
    EXPECT_EQ(thread.wait_sum_ns, 0u) << "lock waits exclude barrier waits";
  }
  EXPECT_EQ(named, 3);
}

// ---------------------------------------------------------------------------------------------
// Robust and priority-inheritance mutexes.

TEST(Primitives, RobustMutexOwnerDeadAndNotRecoverablePassThrough) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "robust_mutex", {"abandoned"});
  const std::string f = "robust_mutex";
  const FoundSite dead = find_site(process, f, "abandoned-ownerdead", Operation::kLock);
  ASSERT_NE(dead.site, nullptr);
  const LockSummary& abandoned = *dead.lock;
  EXPECT_TRUE(abandoned.flags & format::kLockRobust);
  EXPECT_EQ(lock_kind_name(abandoned), "mutex+robust");
  EXPECT_EQ(abandoned.init_site.line, marker_line(f, "abandoned-init"));
  EXPECT_EQ(dead.site->count, 1u);
  EXPECT_EQ(dead.site->failed, 0u) << "EOWNERDEAD hands the caller the lock";
  EXPECT_TRUE(abandoned.flags & format::kLockOwnerDied) << "its owner died holding it";
  const SiteSummary* owner = site_of(abandoned, f, "owner-lock", Operation::kLock);
  ASSERT_NE(owner, nullptr);
  EXPECT_EQ(owner->count, 1u);
  const SiteSummary* unlock = site_of(abandoned, f, "abandoned-unlock", Operation::kUnlock);
  ASSERT_NE(unlock, nullptr);
  EXPECT_EQ(unlock->failed, 0u);
  const SiteSummary* lock = site_of(abandoned, f, "abandoned-lock", Operation::kLock);
  const SiteSummary* trylock = site_of(abandoned, f, "abandoned-trylock", Operation::kTryLock);
  ASSERT_NE(lock, nullptr);
  ASSERT_NE(trylock, nullptr);
  EXPECT_EQ(lock->count, 1u);
  EXPECT_EQ(lock->failed, 1u) << "ENOTRECOVERABLE";
  EXPECT_EQ(trylock->count, 1u);
  EXPECT_EQ(trylock->failed, 1u) << "ENOTRECOVERABLE";
  EXPECT_EQ(abandoned.acquisitions, 2u);
  EXPECT_EQ(abandoned.failed, 2u);
  EXPECT_TRUE(abandoned.flags & format::kLockDestroyed);
}

// The report says that an owner died, and only in the process that saw it: not that the program
// recovered the lock (this one never made it consistent), nor in a child forked after (before,
// each such child's report said so too).
TEST(Primitives, AnOwnerDeathIsNotedOnlyWhereItWasSeenAndWithoutClaimingARecovery) {
  TemporaryDirectory dir;
  const ProcessProfile abandoned = record_unchanged(dir, "robust_mutex", {"abandoned"});
  const CommandResult text = run_lockscope({"report", dir.path()});
  ASSERT_EQ(text.exit_status, 0) << text.err;
  EXPECT_NE(text.out.find("was acquired with EOWNERDEAD: a thread or process died holding it"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("recovered"), std::string::npos) << text.out;

  TemporaryDirectory forked_dir;
  const Profile forked = record_all_unchanged(forked_dir, {fixture("robust_mutex"), "forked"});
  ASSERT_EQ(forked.processes.size(), 2u);
  int died_in = 0;
  for (const ProcessProfile& process : forked.processes) {
    const bool parent = !process.parent_was_profiled;
    for (const LockSummary& lock : process.locks)
      if (lock.flags & format::kLockOwnerDied) {
        EXPECT_TRUE(parent) << "pid " << process.pid << ": the child saw no owner die";
        ++died_in;
      }
  }
  EXPECT_EQ(died_in, 1) << "the parent's lock";
}

TEST(Primitives, RobustMutexMadeConsistentAndPriorityInheritanceKeepTheirSemantics) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "robust_mutex", {"recovered"});
  const std::string f = "robust_mutex";
  const FoundSite recovered = find_site(process, f, "recovered-ownerdead", Operation::kTryLock);
  ASSERT_NE(recovered.site, nullptr);
  EXPECT_EQ(recovered.lock->init_site.line, marker_line(f, "recovered-init"));
  EXPECT_TRUE(recovered.lock->flags & format::kLockRobust);
  EXPECT_EQ(recovered.site->failed, 0u) << "EOWNERDEAD from trylock holds the lock too";
  const SiteSummary* relock = site_of(*recovered.lock, f, "recovered-lock", Operation::kLock);
  ASSERT_NE(relock, nullptr);
  EXPECT_EQ(relock->failed, 0u);
  EXPECT_EQ(recovered.lock->acquisitions, 3u);
  EXPECT_EQ(recovered.lock->failed, 0u);

  const FoundSite pi = find_site(process, f, "pi-lock", Operation::kLock);
  ASSERT_NE(pi.site, nullptr);
  EXPECT_TRUE(pi.lock->flags & format::kLockPriorityInherit);
  EXPECT_EQ(lock_kind_name(*pi.lock), "mutex+pi");
  EXPECT_EQ(pi.lock->init_site.line, marker_line(f, "pi-init"));
  const SiteSummary* busy = site_of(*pi.lock, f, "pi-trylock-busy", Operation::kTryLock);
  ASSERT_NE(busy, nullptr);
  EXPECT_EQ(busy->failed, 1u) << "EBUSY";
  const SiteSummary* foreign = site_of(*pi.lock, f, "pi-unlock-foreign", Operation::kUnlock);
  ASSERT_NE(foreign, nullptr);
  EXPECT_EQ(foreign->failed, 1u) << "EPERM";
  EXPECT_EQ(pi.lock->acquisitions, 1u);
  EXPECT_EQ(pi.lock->releases, 1u);
}

}  // namespace
}  // namespace lockscope::testing
