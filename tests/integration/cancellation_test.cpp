// Thread cancellation (pthread_cancel) under the runtime: the program runs as it does plain, a wait
// cancelled inside lockscope's wrapper is recorded as what it was, and lockscope's own work is no
// cancellation point (src/runtime/cancellation.h).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

using format::Operation;

// What the fixture measured, from its stderr line
// "waited cond C timed T sem S interrupted I ns; spinner pairs P".
struct Measured {
  long long cond_ns = -1, timed_ns = -1, sem_ns = -1, interrupted_ns = -1;
  long spinner_pairs = -1;
};
Measured measured_by(const std::string& err) {
  Measured m;
  const size_t at = err.find("waited cond ");
  if (at != std::string::npos)
    std::sscanf(err.c_str() + at,
                "waited cond %lld timed %lld sem %lld interrupted %lld ns; spinner pairs %ld",
                &m.cond_ns, &m.timed_ns, &m.sem_ns, &m.interrupted_ns, &m.spinner_pairs);
  return m;
}

// A cancelled condition or semaphore wait, or a semaphore wait a signal handler interrupted, is a
// wait that failed, from the call to the cancellation or the signal (the fixture sleeps 50 ms once
// the waiter sleeps); a condition wait's mutex is not
// held through it; neither object counts the thread as a waiter afterwards. Before, the condition
// waits were missing, the mutex counted as held for their whole length (~100 ms a hold of
// microseconds), the condvar counted a waiter for the rest of the run, and the cancelled sem_wait
// counted as an acquisition.
TEST(Cancellation, ACancelledWaitIsAFailedWaitAndItsMutexIsNotHeldThroughIt) {
  for (const char* mode : {"summary", "trace"}) {
    SCOPED_TRACE(mode);
    TemporaryDirectory dir;
    CommandResult recorded;
    const ProcessProfile process = record_program_unchanged(
        dir, {fixture("thread_cancel"), "20"}, nullptr, &recorded, record_options_for(mode));
    const Measured measured = measured_by(recorded.err);
    ASSERT_GT(measured.sem_ns, 0) << recorded.err;
    struct Wait {
      const char* marker;
      Operation op;
      long long measured_ns;
    };
    for (const Wait& w : {Wait{"cond-wait", Operation::kCondWait, measured.cond_ns},
                          Wait{"timed-wait", Operation::kCondTimedWait, measured.timed_ns},
                          Wait{"sem-wait", Operation::kSemWait, measured.sem_ns},
                          // Interrupted by a signal handler (EINTR): before, its wait was lost.
                          Wait{"sem-interrupted", Operation::kSemWait, measured.interrupted_ns}}) {
      SCOPED_TRACE(w.marker);
      const FoundSite site = find_site(process, "thread_cancel", w.marker, w.op);
      ASSERT_NE(site.site, nullptr) << "the wait is missing";
      EXPECT_EQ(site.site->count, 1u);
      EXPECT_EQ(site.site->failed, 1u) << "it did not complete";
      EXPECT_EQ(site.site->acquisitions(), 0u);
      EXPECT_GE(site.site->wait_sum_ns, 50 * kMs) << "asleep 50 ms before its cancellation";
      // Within what the fixture measured around it (the runtime's clock and the fixture's differ
      // by their calibration: a millisecond's slack).
      EXPECT_LE(site.site->wait_sum_ns, static_cast<uint64_t>(w.measured_ns) + kMs);
    }
    // The waiters' mutex: held for microseconds before each wait and after it (glibc re-takes it
    // for the clean-up handler, which unlocks it), never through the wait.
    for (const char* marker : {"cond-lock", "timed-lock"}) {
      const FoundSite lock = find_site(process, "thread_cancel", marker, Operation::kLock);
      ASSERT_NE(lock.site, nullptr) << marker;
      EXPECT_EQ(lock.site->count, 1u) << marker;
      EXPECT_LT(lock.site->hold_sum_ns, 20 * kMs) << marker << ": counted as held through its wait";
    }
    const FoundSite unlock =
        find_site(process, "thread_cancel", "cleanup-unlock", Operation::kUnlock);
    ASSERT_NE(unlock.site, nullptr);
    EXPECT_EQ(unlock.site->count, 2u) << "each condition waiter's clean-up handler";
    EXPECT_EQ(process.counter(format::Counter::kUnbalancedUnlocks), 0u);
    // Nobody waits on the condvar or the semaphore any more when main signals and posts.
    const FoundSite signal =
        find_site(process, "thread_cancel", "after-signal", Operation::kCondSignal);
    ASSERT_NE(signal.site, nullptr);
    EXPECT_EQ(signal.site->with_waiters, 0u) << "a cancelled waiter still counted as waiting";
    EXPECT_EQ(signal.site->without_waiters, 1u);
    const FoundSite post = find_site(process, "thread_cancel", "after-post", Operation::kSemPost);
    ASSERT_NE(post.site, nullptr);
    EXPECT_EQ(post.site->without_waiters, 1u);
    EXPECT_EQ(process.counter(format::Counter::kWaitsInProgress), 0u);
    EXPECT_EQ(process.counter(format::Counter::kHoldsInProgress), 0u);
    // Each waiter's row says it too: one failed call.
    int cancelled_waiters = 0;
    for (const ThreadSummary& thread : process.threads)
      if (!(thread.flags & format::kThreadMain) && thread.failed == 1) ++cancelled_waiters;
    EXPECT_EQ(cancelled_waiters, 4) << "three cancelled, one interrupted";
  }
}

// A thread cancelled while it locks and unlocks (no cancellation point of its own until
// pthread_testcancel) writes snapshots meanwhile: lockscope's file writes acted on the
// cancellation, unwinding the thread out of the snapshot with lockscope's merge lock held, and the
// program hung (killed by the fixture's alarm). Now it runs as plain, with every pair counted.
TEST(Cancellation, AThreadCancelledWhileItLocksNeverHangsTheProgramWritingSnapshots) {
  TemporaryDirectory dir;
  CommandResult recorded;
  const ProcessProfile process = record_program_unchanged(
      dir, {fixture("thread_cancel"), "300"}, nullptr, &recorded, {"--snapshot-interval", "0.01"});
  const Measured measured = measured_by(recorded.err);
  ASSERT_GT(measured.spinner_pairs, 0) << recorded.err;
  const FoundSite spin = find_site(process, "thread_cancel", "spin-lock", Operation::kLock);
  ASSERT_NE(spin.site, nullptr);
  EXPECT_EQ(spin.site->count, static_cast<uint64_t>(measured.spinner_pairs));
}

}  // namespace
}  // namespace lockscope::testing
