// summarize_trace on hand-written events (1 tick = 1 ns): holds nest and pause, waits pair with
// their begins, a timeout is waiting time but not an acquisition, owner changes follow the clock.
#include "analysis/trace_summary.h"

#include <gtest/gtest.h>

#include "hand_written_trace.h"

namespace lockscope {
namespace {

using format::Operation;
using format::TraceKind;

constexpr uint64_t kA = 0x1000, kB = 0x2000, kCond = 0x3000;

using EventList = HandWrittenTrace;

const LockSummary& lock_at(const TraceSummary& summary, uint64_t address) {
  for (const LockSummary& lock : summary.locks)
    if (lock.address == address) return lock;
  static const LockSummary none;
  ADD_FAILURE() << "no lock " << address;
  return none;
}

const SiteSummary& site_of(const LockSummary& lock, Operation op, size_t site) {
  for (const SiteSummary& s : lock.sites)
    if (s.operation == op && s.location.offset == 0x100 + site) return s;
  static const SiteSummary none;
  ADD_FAILURE() << "no site " << site;
  return none;
}

TEST(TraceSummary, RecursiveHoldsNestAndAConditionWaitPausesTheMutexHold) {
  EventList events;
  add_condition_wait_in_recursive_hold(events, kA, kCond);
  const TraceSummary summary = summarize_trace(events.process);
  const LockSummary& a = lock_at(summary, kA);
  // The inner re-lock adds no time: the outer hold holds the mutex meanwhile, and counts it.
  EXPECT_EQ(site_of(a, Operation::kLock, 1).hold_sum_ns, 0u);
  EXPECT_EQ(site_of(a, Operation::kLock, 1).hold_samples, 1u);
  EXPECT_EQ(site_of(a, Operation::kLock, 0).hold_sum_ns, 600u);
  EXPECT_EQ(site_of(a, Operation::kCondReacquire, 3).count, 1u);
  EXPECT_EQ(site_of(a, Operation::kCondReacquire, 3).contended, 0u);
  EXPECT_EQ(a.acquisitions, 2u);
  EXPECT_EQ(a.releases, 2u);
  const SiteSummary& wait = site_of(lock_at(summary, kCond), Operation::kCondWait, 3);
  EXPECT_EQ(wait.wait_sum_ns, 250u);
  EXPECT_EQ(wait.contended, 1u);
  ASSERT_EQ(summary.threads.size(), 1u);
  EXPECT_EQ(summary.threads[0].acquisitions, 2u);
  EXPECT_EQ(summary.threads[0].wait_ns_by_primitive[static_cast<int>(format::Primitive::kCondVar)],
            250u);
}

TEST(TraceSummary, ATimeoutIsWaitingTimeAndAFailureButNoAcquisition) {
  EventList events;
  events.add(1, TraceKind::kWaitBegin, 2000, kB, Operation::kLock, 0);
  events.add(1, TraceKind::kCall, 2500, kB, Operation::kLock, 0, format::kTraceWaited);
  events.add(1, TraceKind::kCall, 2600, kB, Operation::kUnlock, 1);
  events.add(1, TraceKind::kWaitBegin, 3000, kB, Operation::kTimedLock, 2);
  events.add(1, TraceKind::kCall, 3100, kB, Operation::kTimedLock, 2,
             format::kTraceWaited | format::kTraceFailed | format::kTraceTimedOut);
  // An immediate error after a wait began (EDEADLK) is no waiting time.
  events.add(1, TraceKind::kWaitBegin, 4000, kB, Operation::kLock, 3);
  events.add(1, TraceKind::kCall, 4001, kB, Operation::kLock, 3,
             format::kTraceWaited | format::kTraceFailed);
  const TraceSummary summary = summarize_trace(events.process);
  const LockSummary& b = lock_at(summary, kB);
  const SiteSummary& lock = site_of(b, Operation::kLock, 0);
  EXPECT_EQ(lock.contended, 1u);
  EXPECT_EQ(lock.wait_sum_ns, 500u);
  EXPECT_EQ(lock.hold_sum_ns, 100u);
  const SiteSummary& timed = site_of(b, Operation::kTimedLock, 2);
  EXPECT_EQ(timed.failed, 1u);
  EXPECT_EQ(timed.contended, 0u);
  EXPECT_EQ(timed.wait_sum_ns, 100u);
  const SiteSummary& deadlock = site_of(b, Operation::kLock, 3);
  EXPECT_EQ(deadlock.failed, 1u);
  EXPECT_EQ(deadlock.wait_sum_ns, 0u);
  EXPECT_EQ(b.acquisitions, 1u);
  EXPECT_EQ(summary.threads[0].failed, 2u);
  EXPECT_EQ(summary.threads[0].wait_sum_ns, 600u);
}

TEST(TraceSummary, OwnerChangesAreTheRuntimesFlaggedAcquisitions) {
  EventList events;
  // Thread 1 takes A twice (the second from thread 2: flagged), thread 2 three times (its first
  // and second flagged, its third after itself); a condition wait's re-take is flagged too.
  events.add(1, TraceKind::kCall, 10, kA, Operation::kLock, 0);
  events.add(1, TraceKind::kCall, 15, kA, Operation::kUnlock, 1);
  events.add(1, TraceKind::kCall, 30, kA, Operation::kLock, 0, format::kTraceOwnerChanged);
  events.add(1, TraceKind::kHoldPause, 31, kA, Operation::kCondWait, 2);
  events.add(1, TraceKind::kHoldResume, 60, kA, Operation::kCondWait, 2,
             format::kTraceOwnerChanged);
  events.add(1, TraceKind::kCall, 65, kA, Operation::kUnlock, 1);
  for (uint64_t t : {20u, 40u, 50u}) {
    events.add(2, TraceKind::kCall, t, kA, Operation::kLock, 0,
               t == 50 ? 0 : format::kTraceOwnerChanged);
    events.add(2, TraceKind::kCall, t + 5, kA, Operation::kUnlock, 1);
  }
  const TraceSummary summary = summarize_trace(events.process);
  EXPECT_EQ(lock_at(summary, kA).owner_changes, 4u);
  EXPECT_EQ(summary.threads.size(), 2u);
}

}  // namespace
}  // namespace lockscope
