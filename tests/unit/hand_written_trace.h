// A process's trace written by hand for the tests of the trace views (trace_summary,
// trace_intervals): one tick is one nanosecond, an event's time is its tick, and call site n is at
// offset 0x100 + n.
#pragma once

#include "analysis/profile_model.h"

namespace lockscope {

struct HandWrittenTrace {
  ProcessProfile process;
  HandWrittenTrace() {
    process.trace.present = true;
    process.trace.ns_per_tick_q32 = uint64_t{1} << 32;
    for (uint64_t site = 0; site < 8; ++site) {
      CodeLocation location;
      location.offset = 0x100 + site;
      process.trace.sites.push_back(location);
    }
  }
  void add(uint32_t tid, format::TraceKind kind, uint64_t ticks, uint64_t object,
           format::Operation op, size_t site, uint8_t flags = 0) {
    TraceRecord event;
    event.tid = tid;
    event.kind = kind;
    event.ticks = ticks;
    event.time_ns = ticks;
    event.object = object;
    event.operation = op;
    event.site = site;
    event.flags = flags;
    process.trace.events.push_back(event);
  }
  // An uncontended hold of `object` by `tid`: locked at `begin`, unlocked at `end`.
  void add_hold(uint32_t tid, uint64_t object, uint64_t begin, uint64_t end) {
    add(tid, format::TraceKind::kCall, begin, object, format::Operation::kLock, 0);
    add(tid, format::TraceKind::kCall, end, object, format::Operation::kUnlock, 0);
  }
  // A contended lock of `object` by `tid`: waiting from `begin`, acquired at `end`.
  void add_contended_lock(uint32_t tid, uint64_t object, uint64_t begin, uint64_t end) {
    add(tid, format::TraceKind::kWaitBegin, begin, object, format::Operation::kLock, 0);
    add(tid, format::TraceKind::kCall, end, object, format::Operation::kLock, 0,
        format::kTraceWaited);
  }
};

// Thread 7 takes `mutex` twice (recursive: 100 and 200), releases the inner hold at 300, waits on
// `cond` from 400 to 650 (letting go of the mutex at 400, re-taking it at 650, holding it again at
// 700), and releases the outer hold at 1000. Events 0 to 8.
inline void add_condition_wait_in_recursive_hold(HandWrittenTrace& trace, uint64_t mutex,
                                                 uint64_t cond) {
  using format::Operation;
  using format::TraceKind;
  trace.add(7, TraceKind::kCall, 100, mutex, Operation::kLock, 0);
  trace.add(7, TraceKind::kCall, 200, mutex, Operation::kLock, 1);    // recursive
  trace.add(7, TraceKind::kCall, 300, mutex, Operation::kUnlock, 2);  // inner: 100
  trace.add(7, TraceKind::kWaitBegin, 400, cond, Operation::kCondWait, 3);
  trace.add(7, TraceKind::kHoldPause, 400, mutex, Operation::kCondWait, 3);
  trace.add(7, TraceKind::kCall, 650, cond, Operation::kCondWait, 3, format::kTraceWaited);
  trace.add(7, TraceKind::kCall, 650, mutex, Operation::kCondReacquire, 3);
  trace.add(7, TraceKind::kHoldResume, 700, mutex, Operation::kCondWait, 3);
  trace.add(7, TraceKind::kCall, 1000, mutex, Operation::kUnlock, 4);  // outer: 900 - 300 paused
}

}  // namespace lockscope
