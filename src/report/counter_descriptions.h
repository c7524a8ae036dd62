// What each of a profile's counters (format::Counter) is called in the JSON report and what the
// text footer says of it: one switch over every counter, so that the two cannot disagree and a
// counter added to the format cannot be left out of either (no default: -Werror=switch; and
// static_assert below, for a counter added without moving Counter::kLast).
#pragma once

#include <cstdint>

#include "common/profile_format.h"

namespace lockscope {

struct CounterDescription {
  const char* json_key = nullptr;  // the key in a process's "counters" object
  // The footer's note for a non-zero value ("pid N: COUNT NOTE"); nullptr: a count, not a problem.
  const char* note = nullptr;
};

constexpr CounterDescription describe_counter(format::Counter counter) {
  using format::Counter;
  switch (counter) {
    case Counter::kDroppedSites:
      return {"dropped_site_events", "events not recorded: call-site table full"};
    case Counter::kDroppedLocks:
      return {"dropped_lock_events", "events not recorded: lock table full"};
    case Counter::kUnbalancedUnlocks:
      return {"unbalanced_unlocks", "unlocks of locks not seen acquired by that thread"};
    case Counter::kHeldStackOverflow:
      return {"held_stack_overflows", "holds not timed: more than 64 nested locks"};
    case Counter::kReentrantCalls:
      return {"reentrant_calls",
              "calls passed through unrecorded (from inside lockscope, or a "
              "signal handler that interrupted it)"};
    case Counter::kBootstrapCalls:
      return {"bootstrap_calls", "calls before the runtime was ready (unrecorded)"};
    case Counter::kThreadsSeen:
      return {"threads_seen", nullptr};
    case Counter::kThreadsLiveAtExit:
      return {"threads_live_at_exit",
              "threads still running at exit (latest counts may be "
              "incomplete)"};
    case Counter::kDroppedThreads:
      return {"dropped_threads", "threads not listed: no memory for their slots"};
    case Counter::kWaitsInProgress:
      return {"waits_in_progress_at_exit",
              "waits still blocked at exit (counted up to the exit, as calls that did not "
              "complete: FAILED)"};
    case Counter::kHoldsInProgress:
      return {"holds_in_progress_at_exit",
              "locks still held at exit (timed holds counted up to "
              "the exit)"};
    case Counter::kCallsAfterSnapshot:
      return {"calls_after_snapshot",
              "calls by still-running threads while the profile was "
              "written (not in it)"};
    case Counter::kBlockingHoldsUntimed:
      return {"blocking_holds_untimed",
              "locks first waited for during a hold that may not be "
              "timed (then in the hold estimate)"};
    case Counter::kDroppedOrderEdges:
      return {"dropped_lock_order_edges",
              "lock-order edges not kept (out of memory): inversions "
              "through them are not shown"};
    case Counter::kTraceFilesFailed:
      return {"trace_files_failed",
              "threads whose trace file could not be made (their events "
              "are only in the counts)"};
    case Counter::kThreadsNotPaused:
      return {"threads_not_paused",
              "running threads the profile's snapshot could not stop at a "
              "lock call (their figures may be one call off)"};
    case Counter::kCallsBeforeRegistration:
      return {"calls_before_registration",
              "calls passed through unrecorded: their thread's first call found lockscope's "
              "own lock held for over a second (a profile write that stalled: the program's own "
              "open(), a slow filesystem); it tried again every 10 ms until it was registered"};
  }
  return {};
}

inline constexpr uint32_t kLastCounterId = static_cast<uint32_t>(format::Counter::kLast);

constexpr bool every_counter_is_described() {
  for (uint32_t id = 1; id <= kLastCounterId; ++id)
    if (describe_counter(static_cast<format::Counter>(id)).json_key == nullptr) return false;
  return describe_counter(static_cast<format::Counter>(kLastCounterId + 1)).json_key == nullptr;
}
static_assert(every_counter_is_described(), "Counter::kLast must be the last counter");

}  // namespace lockscope
