// Trace mode's writer (record --trace): each thread appends timestamped events to a file of its
// own, mapped shared, so that the page cache holds every event the moment it is written and a
// process killed by SIGKILL keeps them all (common/trace_format.h has the layout).
//
// Only the thread itself appends to its file, from code marked inside lockscope (a signal handler
// that interrupts an append passes through), so an append is two plain stores and a release store
// of the count. Files are opened when a thread registers, closed when the kernel says it is gone,
// and forgotten (unmapped, untouched) in a fork child, whose threads open files of their own.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/runtime_config.h"
#include "common/trace_format.h"

namespace lockscope::runtime {

// Events a trace file of `bytes` holds: the largest power of two that fits (the writer masks,
// never divides), at least 64.
constexpr uint64_t trace_capacity_for(uint64_t bytes) {
  uint64_t events = 64;
  while (events * 2 * sizeof(format::TraceEvent) <= bytes) events *= 2;
  return events;
}

struct TraceSettings {
  bool enabled = false;  // config trace=1
  bool ring = false;     // config trace_ring=1: a full file overwrites its oldest events
  // Events per thread file (config trace_size=BYTES).
  uint64_t capacity = trace_capacity_for(config::kDefaultTraceSize);
  uint64_t min_wait_ns = config::kDefaultMinWaitNs;  // config min_wait_ns=N: only waits that long
  uint64_t min_wait_ticks = 0;   // the same in clock ticks, set once the clock is known
};

// A thread's open trace file; all zero when it has none.
struct TraceBuffer {
  format::TraceHeader* header;
  format::TraceEvent* events;
  uint64_t capacity;  // a power of two
  uint64_t written;   // the thread's own copy of header->written
  uint64_t filtered;
  size_t mapped_bytes;
  // Events whose pages were written ahead (populate_trace): a store into a page of a shared file
  // mapping that the file system cannot back (disk or quota full) raises SIGBUS, so no event is
  // stored before its page was populated without a fault.
  uint64_t populated;
  bool refused;  // the file system refused the next pages: the file is full from there
  // While the thread forks: `header` is parked here (appends see none), so that nothing the child
  // runs before lockscope's own fork handler (another library's handlers) writes into the parent's
  // file, which the child inherits mapped.
  format::TraceHeader* parked;
};

// Creates and maps the calling thread's file in the profile directory; false (and `buffer` left
// empty) when the system refused, which the caller counts.
bool open_trace(TraceBuffer& buffer, uint32_t tid, uint64_t now_ticks);
// The thread is gone (or the process ends normally): marks the file closed and unmaps it.
void close_trace(TraceBuffer& buffer);
// Marks the file closed, leaving it mapped: the process is about to end, a thread may still write.
void mark_trace_closed(TraceBuffer& buffer);
// The process wrote its final profile: every thread's file is complete (threads may still write).
// Under the merge lock (a gone thread's file may be unmapped meanwhile); `from_signal`: only tried.
void mark_process_traces_closed(bool from_signal);
// Makes the pages of the next events writable without a fault (MADV_POPULATE_WRITE); false when
// the file system refused them (the file is then full: later events are dropped and counted).
bool populate_trace(TraceBuffer& buffer);
// In a fork child: the mapping is the parent's file, which the child must not write. Unmaps it.
void forget_trace(TraceBuffer& buffer);
// Around a fork, in the forking thread: appends stop before it, and resume after it in the parent.
void park_trace(TraceBuffer& buffer);
void unpark_trace(TraceBuffer& buffer);

inline void append_trace(TraceBuffer& buffer, const format::TraceEvent& event) {
  if (buffer.header == nullptr) return;
  if ((buffer.written >= buffer.capacity && !(buffer.header->flags & format::kTraceRing)) ||
      (buffer.written >= buffer.populated && buffer.populated < buffer.capacity &&
       (buffer.refused || !populate_trace(buffer)))) {
    __atomic_store_n(&buffer.header->dropped, buffer.header->dropped + 1, __ATOMIC_RELAXED);
    return;
  }
  buffer.events[buffer.written & (buffer.capacity - 1)] = event;
  ++buffer.written;
  __atomic_store_n(&buffer.header->written, buffer.written, __ATOMIC_RELEASE);
}

inline void count_filtered(TraceBuffer& buffer) {
  if (buffer.header == nullptr) return;
  __atomic_store_n(&buffer.header->filtered, ++buffer.filtered, __ATOMIC_RELAXED);
}

}  // namespace lockscope::runtime
