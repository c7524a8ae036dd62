// A process's trace (record --trace) as intervals on timelines, the view behind the timeline
// formats (chrome, and the events table of sqlite): each wait from its begin to the call's return,
// each hold of a lock from its acquisition to its release, and each handoff, the release that
// ended a contended acquisition's wait.
//
// - A wait is a call that blocked (kTraceWaited) and whose kWaitBegin is in the trace: every
//   primitive's (a condition wait's, a timed-out lock's too). Its duration is converted from the
//   clock's ticks the runtime's way, so waits add up to the summary tables' figures.
// - A hold is a successful acquisition (mutex, spinlock, rwlock either side) up to the release
//   that ends it (the innermost hold of that lock by that thread, as trace_summary.h pairs them).
//   A condition wait lets go of its mutex: the hold is then two pieces, one ending at the pause
//   and one beginning at the re-take, and other threads' holds fit in between. A hold still held
//   when the thread's trace ends is a piece to its last event, marked open.
// - A handoff is named only where the trace identifies it: for a contended acquisition, the hold
//   piece of the same lock by another thread begun last before the acquisition, if it was still
//   held when the wait began. Its end is not the test: a release is stamped when the unlock call
//   returns, which can be after the waiter it woke has the lock (the futex wake, a preemption),
//   while an acquisition is stamped once the lock is held, before it can be released. For an
//   rwlock's writer behind several readers, it is the reader that took it last. CPUs' clocks that
//   disagree by more than a hold (some virtual machines') can hide a handoff, never invent one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/profile_model.h"

namespace lockscope {

struct TraceWait {
  size_t call = 0;        // index into ProcessTrace::events: the call that waited
  uint64_t begin_ns = 0;  // times since the process image started (TraceRecord::time_ns)
  uint64_t end_ns = 0;
  uint64_t wait_ns = 0;  // from the ticks, exact (end_ns - begin_ns may differ by a rounding)
};

struct TraceHold {
  static constexpr size_t kNoEvent = SIZE_MAX;
  size_t acquire = 0;     // the acquisition (kCall; for a piece after a pause: still it)
  size_t end = kNoEvent;  // the release (kCall), or the pause (kHoldPause); kNoEvent: open
  uint64_t begin_ns = 0;  // the acquisition's, or the resume's time
  uint64_t end_ns = 0;
  uint64_t hold_ns = 0;  // from the ticks
  bool resumed = false;  // begins where a condition wait took the mutex back
};

struct TraceHandoff {
  size_t hold = 0;  // index into TraceIntervals::holds: the piece whose end let the waiter in
  size_t wait = 0;  // index into TraceIntervals::waits: the contended acquisition it ended
};

struct TraceIntervals {
  std::vector<TraceWait> waits;        // in the order of their calls in the trace
  std::vector<TraceHold> holds;        // by thread, each thread's by its end
  std::vector<TraceHandoff> handoffs;  // by wait
};

TraceIntervals trace_intervals(const ProcessTrace& trace);

// The names the timelines give a traced process's threads and locks, the same in every format.
class TraceNames {
 public:
  explicit TraceNames(const ProcessProfile& process);
  // Each traced thread by tid: its name in the profile, else the last the trace gave it, else
  // "thread 4711".
  const std::map<uint32_t, std::string>& threads() const { return threads_; }
  // The lock a traced call was on, as a leaf frame names it (lock_frame_name: "mutex 0x55d1c0",
  // "rwlock 0x5610 (read)"); a lock the profile's tables do not have (a ring's overwritten start)
  // by its address and the operation's primitive.
  std::string lock(const TraceRecord& call, format::Operation operation) const;
  // The profile's lock a traced call was on; nullptr for one its tables do not have.
  const LockSummary* lock_of(const TraceRecord& call) const;

 private:
  std::map<uint32_t, std::string> threads_;
  std::map<std::pair<uint64_t, uint32_t>, const LockSummary*> locks_;  // (address, generation)
};

}  // namespace lockscope
