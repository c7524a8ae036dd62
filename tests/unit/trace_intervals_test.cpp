// trace_intervals on hand-written events: waits pair with their begins, holds
// nest and split where a condition wait lets go of the mutex, and a handoff is the latest release
// by another thread inside the wait, or none; the timelines' names of threads and locks.
#include "analysis/trace_intervals.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "hand_written_trace.h"

namespace lockscope {
namespace {

using format::Operation;
using format::TraceKind;

constexpr uint64_t kA = 0x1000, kCond = 0x3000;

using EventList = HandWrittenTrace;

TEST(TraceIntervals, AConditionWaitSplitsTheHoldAndARecursiveHoldNests) {
  EventList events;
  add_condition_wait_in_recursive_hold(events, kA, kCond);
  events.add(7, TraceKind::kCall, 1100, kA, Operation::kLock, 0);  // open: 1100..1200
  events.add(7, TraceKind::kThreadExit, 1200, 0, Operation::kLock, 0);
  const TraceIntervals intervals = trace_intervals(events.process.trace);
  ASSERT_EQ(intervals.waits.size(), 1u);
  EXPECT_EQ(intervals.waits[0].call, 5u);
  EXPECT_EQ(intervals.waits[0].begin_ns, 400u);
  EXPECT_EQ(intervals.waits[0].wait_ns, 250u);
  ASSERT_EQ(intervals.holds.size(), 4u);
  const TraceHold& inner = intervals.holds[0];
  EXPECT_EQ(inner.acquire, 1u);
  EXPECT_EQ(inner.end, 2u);
  EXPECT_EQ(inner.hold_ns, 100u);
  const TraceHold& paused = intervals.holds[1];
  EXPECT_EQ(paused.acquire, 0u);
  EXPECT_EQ(paused.end, 4u);
  EXPECT_EQ(paused.hold_ns, 300u);
  EXPECT_FALSE(paused.resumed);
  const TraceHold& resumed = intervals.holds[2];
  EXPECT_EQ(resumed.acquire, 0u);
  EXPECT_EQ(resumed.end, 8u);
  EXPECT_EQ(resumed.begin_ns, 700u);
  EXPECT_EQ(resumed.hold_ns, 300u);
  EXPECT_TRUE(resumed.resumed);
  const TraceHold& open = intervals.holds[3];
  EXPECT_EQ(open.end, TraceHold::kNoEvent);
  EXPECT_EQ(open.end_ns, 1200u);
  EXPECT_EQ(open.hold_ns, 100u);
  EXPECT_TRUE(intervals.handoffs.empty()) << "the condition wait is not an acquisition";
}

// Thread 1 holds A 100..500 and 600..700; thread 2 waits 300..510, let in by the release at 500;
// thread 3 waits 520..900, through thread 2's hold to 550 and thread 1's from 600: the later one
// let it in.
TEST(TraceIntervals, AHandoffIsTheLastHoldByAnotherThreadStillHeldWhenTheWaitBegan) {
  EventList events;
  events.add_hold(1, kA, 100, 500);
  events.add_hold(1, kA, 600, 700);
  events.add_contended_lock(2, kA, 300, 510);
  events.add(2, TraceKind::kCall, 550, kA, Operation::kUnlock, 0);
  events.add_contended_lock(3, kA, 520, 900);
  events.add(3, TraceKind::kCall, 950, kA, Operation::kUnlock, 0);
  // A wait that began after the last hold ended (its release not in the trace): no handoff.
  events.add_contended_lock(4, kA, 960, 990);
  events.add(4, TraceKind::kCall, 995, kA, Operation::kUnlock, 0);
  // Thread 5's release is stamped at 1100, after thread 6 has the lock (1050): still the handoff.
  events.add_hold(5, kA, 1000, 1100);
  events.add_contended_lock(6, kA, 1010, 1050);
  const TraceIntervals intervals = trace_intervals(events.process.trace);
  ASSERT_EQ(intervals.waits.size(), 4u);
  ASSERT_EQ(intervals.handoffs.size(), 3u);
  const auto released_at = [&](const TraceHandoff& handoff) {
    return intervals.holds[handoff.hold].end_ns;
  };
  EXPECT_EQ(intervals.waits[intervals.handoffs[0].wait].end_ns, 510u);
  EXPECT_EQ(released_at(intervals.handoffs[0]), 500u);
  EXPECT_EQ(intervals.waits[intervals.handoffs[1].wait].end_ns, 900u);
  EXPECT_EQ(released_at(intervals.handoffs[1]), 700u) << "thread 2's at 550 is earlier";
  EXPECT_EQ(intervals.waits[intervals.handoffs[2].wait].end_ns, 1050u);
  EXPECT_EQ(released_at(intervals.handoffs[2]), 1100u);
}

// Threads are named by the profile, else by the trace's last name, else by tid; a lock the
// profile's tables do not have by its address and the operation's primitive.
TEST(TraceNames, ThreadsByProfileThenTraceAndLocksKnownOrNot) {
  EventList trace;
  for (uint32_t tid : {1u, 2u, 3u}) {
    TraceThread thread;
    thread.tid = tid;
    trace.process.trace.threads.push_back(thread);
  }
  trace.add(2, TraceKind::kThreadName, 10, 0, Operation::kLock, 0);
  trace.process.trace.events.back().name = "first";
  trace.add(2, TraceKind::kThreadName, 20, 0, Operation::kLock, 0);
  trace.process.trace.events.back().name = "worker";
  trace.add(3, TraceKind::kThreadName, 30, 0, Operation::kLock, 0);
  trace.process.trace.events.back().name = "renamed";
  ThreadSummary named;
  named.tid = 3;
  named.name = "io";
  trace.process.threads = {named};
  LockSummary lock;
  lock.address = kA;
  lock.generation = 2;
  trace.process.locks = {lock};
  trace.add(1, TraceKind::kCall, 40, kA, Operation::kLock, 0);
  trace.process.trace.events.back().generation = 2;
  trace.add(1, TraceKind::kCall, 50, kCond, Operation::kCondWait, 0);
  const TraceNames names(trace.process);
  EXPECT_EQ(names.threads(),
            (std::map<uint32_t, std::string>{{1, "thread 1"}, {2, "worker"}, {3, "io"}}));
  EXPECT_EQ(names.lock(trace.process.trace.events[3], Operation::kLock), "mutex 0x1000#2");
  EXPECT_EQ(names.lock(trace.process.trace.events[4], Operation::kCondWait), "condvar 0x3000");
}

}  // namespace
}  // namespace lockscope
