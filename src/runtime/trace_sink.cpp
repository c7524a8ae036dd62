// The trace sink (record --trace): every event goes to the summary tables first (so the counts stay
// exact whatever the trace filters or drops), then into the thread's trace file with its time.
//
// A wait is two events: kWaitBegin when it starts (marked before the blocking call, so that a
// process killed while a thread waits still shows the wait) and the kCall that ends it. With
// --min-wait only waits at least that long are written, both events at the wait's end, and every
// other event is left out (counted in the file's `filtered`).
#include <errno.h>
#include <sys/prctl.h>

#include <cstring>

#include "runtime/recorder.h"
#include "runtime/trace_files.h"

namespace lockscope::runtime {
namespace {

using format::TraceKind;

uint32_t generation_of(const Recorded& recorded) {
  return recorded.slot ? recorded.slot->generation.load(std::memory_order_relaxed) : 0;
}

// Writes the wait from `start` to `end` (kCall flags `flags`): its begin unless already marked.
void write_wait(ThreadState& self, const void* object, uintptr_t site, format::Operation op,
                uint32_t generation, uint64_t start, uint64_t end, uint8_t flags, bool begun) {
  const uint64_t min_wait = g_runtime.trace.min_wait_ticks;
  if (min_wait != 0) {
    if (!(flags & format::kTraceWaited) || end - start < min_wait)
      return count_filtered(self.trace);
    begun = false;  // begins are not marked under a filter
  }
  if ((flags & format::kTraceWaited) && !begun)
    append_trace(self.trace, TraceKind::kWaitBegin, start, object, site, op, 0, 0);
  append_trace(self.trace, TraceKind::kCall, end, object, site, op, generation, flags);
}

// An uncontended acquisition at a site the thread used before, reached through the sink (the
// fast path in acquire_slow takes most of them): false when it is not one.
bool acquire_at_traced_site(ThreadState& self, const void* lock, format::Operation op,
                            uintptr_t site, uint32_t* owner_word) {
  if (format::operation_class(op) == format::OperationClass::kAcquire &&
      self.held_depth >= kMaxHeldLocks)
    return false;
  open_cache_window(self);
  SiteCacheEntry* cached = traced_site(self, lock, site, op);
  if (cached) record_traced_acquire(self, *cached, op, 0, owner_word);
  close_cache_window(self);
  return cached != nullptr;
}

// The release of the thread's innermost hold at a site used before, reached through the sink:
// false when it is not one.
bool release_at_traced_site(ThreadState& self, const void* lock, uintptr_t site, bool made_wait,
                            uint64_t end_ticks) {
  if (self.held_depth == 0) return false;
  HeldLock& top = self.held[self.held_depth - 1];
  if (top.lock != lock || top.epoch != own_epoch(self)) return false;
  // (A copy: the window closes before the snapshot record_traced_release may write.)
  SiteCacheEntry entry;
  if (!copy_traced_site(self, lock, site, static_cast<format::Operation>(top.release_operation),
                        entry))
    return false;
  record_traced_release(self, top, entry, made_wait, end_ticks);
  return true;
}

Recorded trace_acquire(ThreadState& self, const void* lock, format::Operation op, uintptr_t site,
                       const AcquireOutcome& outcome) {
  if (!outcome.contended && outcome.result == 0 && outcome.stack_depth == 0 &&
      acquire_at_traced_site(self, lock, op, site, outcome.owner_word))
    return {};
  const Recorded recorded = record_acquire(self, lock, op, site, outcome);
  InsideLockscope inside;
  const uint8_t failed =
      (acquired(outcome.result)               ? 0
       : outcome.result == ETIMEDOUT          ? format::kTraceFailed | format::kTraceTimedOut
       : failed_after_waiting(outcome.result) ? format::kTraceFailed | format::kTraceInterrupted
                                              : format::kTraceFailed) |
      (recorded.owner_changed ? format::kTraceOwnerChanged : 0);
  if (outcome.contended)
    write_wait(self, lock, site, op, generation_of(recorded), outcome.start_ticks,
               outcome.end_ticks, format::kTraceWaited | failed, true);
  else
    trace_call(self, lock, site, op, generation_of(recorded), failed, recorded.ticks);
  return recorded;
}

Recorded trace_release(ThreadState& self, const void* lock, uintptr_t site, int result,
                       format::Operation default_operation, bool made_wait, uint64_t end_ticks) {
  if (result == 0 && release_at_traced_site(self, lock, site, made_wait, end_ticks)) return {};
  const Recorded recorded =
      record_release(self, lock, site, result, default_operation, made_wait, end_ticks);
  InsideLockscope inside;
  trace_call(self, lock, site, recorded.operation, generation_of(recorded),
             result == 0 ? 0 : format::kTraceFailed, recorded.ticks);
  return recorded;
}

Recorded trace_event(ThreadState& self, const void* lock, format::Operation op, uintptr_t site,
                     int waiters_seen) {
  const Recorded recorded = record_event(self, lock, op, site, waiters_seen);
  InsideLockscope inside;
  const uint8_t flags = waiters_seen > 0    ? format::kTraceWithWaiters
                        : waiters_seen == 0 ? format::kTraceNoWaiters
                                            : 0;
  trace_call(self, lock, site, op, generation_of(recorded), flags, 0);
  return recorded;
}

Recorded trace_wait(ThreadState& self, const void* lock, format::Operation op, uintptr_t site,
                    const WaitOutcome& wait) {
  const Recorded recorded = record_wait(self, lock, op, site, wait);
  InsideLockscope inside;
  const uint8_t flags = (wait.waited ? format::kTraceWaited : 0) |
                        (wait.failed ? format::kTraceFailed : 0) |
                        (wait.arrived_last ? format::kTraceArrivedLast : 0) |
                        (wait.cancelled ? format::kTraceInterrupted : 0);
  if (wait.waited || g_runtime.trace.min_wait_ticks != 0)
    write_wait(self, lock, site, op, generation_of(recorded), wait.start_ticks, wait.end_ticks,
               flags, wait.begun);
  else  // did not block: one event, at its end
    append_trace(self.trace, TraceKind::kCall, wait.end_ticks, lock, site, op,
                 generation_of(recorded), flags);
  return recorded;
}

void trace_mark(ThreadState& self, TraceKind kind, const void* object, format::Operation op,
                uintptr_t site, uint64_t ticks, uint8_t flags) {
  if (g_runtime.trace.min_wait_ticks != 0) return;  // begins are written with their wait's end
  InsideLockscope inside;
  append_trace(self.trace, kind, ticks, object, site, op, 0, flags);
}

void trace_thread_event(ThreadState& self, TraceKind kind) {
  InsideLockscope inside;
  Runtime& rt = g_runtime;
  const uint64_t now = rt.clock.now();
  if (kind == TraceKind::kThreadStart && self.trace.header == nullptr &&
      !open_trace(self.trace, self.tid, now)) {
    rt.count(format::Counter::kTraceFilesFailed);
    return;
  }
  // Its name: the one it starts with, so that a process killed before its threads exit still
  // names them, and the one it ends with (read by the caller), which a reader takes over the first.
  auto append_name = [&] {
    uint64_t name[2] = {};
    std::memcpy(name, self.name, sizeof(self.name));
    append_trace(self.trace, TraceKind::kThreadName, now, reinterpret_cast<const void*>(name[1]),
                 name[0], format::Operation{}, self.tid, 0);
  };
  if (kind == TraceKind::kThreadExit) append_name();
  append_thread_trace(self.trace, kind, now);
  if (kind == TraceKind::kThreadStart) {
    // Read here, in trace mode only (summary mode reads it at exit or at the write): the calling
    // thread's own name, one system call.
    prctl(PR_GET_NAME, self.name);
    append_name();
  }
}

}  // namespace

constinit const EventSink kTraceSink{trace_acquire, trace_release, trace_event,
                                     trace_wait,    trace_mark,    trace_thread_event};

}  // namespace lockscope::runtime
