// The on-disk trace format (record --trace): one append-only file per thread, mapped shared by the
// runtime, so that what the thread wrote is in the page cache the moment it is written and a
// process killed by SIGKILL loses nothing it had recorded.
//
// A file is `<pid>-<start ns>.<n>.lstrace` in the profile directory, beside the process image's
// `<pid>-<start ns>.lsprof` (n: the image's 1st, 2nd... thread file). Layout:
//
//   TraceHeader (one page) | TraceEvent[capacity]
//
// The writer stores event i at index i % capacity, then publishes `written` = i + 1 (release), so a
// reader trusts the first min(written, capacity) events; in a ring (kTraceRing) that are the last
// `capacity` ones. An event being written when the process was killed is not counted. `closed` is
// set when the thread is known to be gone or the process wrote its final profile: a file of a
// process whose profile is a snapshot (or missing) and not closed was cut short.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lockscope::format {

inline constexpr char kTraceMagic[8] = {'L', 'K', 'S', 'T', 'R', 'A', 'C', 'E'};
inline constexpr uint32_t kTraceVersion = 1;
inline constexpr char kTraceSuffix[] = ".lstrace";
inline constexpr uint32_t kTraceHeaderSize = 4096;

enum TraceFlags : uint32_t {
  kTraceRing = 1,  // a full buffer overwrites its oldest events (else: later events are dropped)
};

struct TraceHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_size;   // kTraceHeaderSize: events start here
  uint32_t event_size;    // sizeof(TraceEvent)
  uint32_t flags;         // TraceFlags
  uint64_t capacity;      // events the file has room for
  uint32_t pid;
  uint32_t tid;
  uint64_t process_start_realtime_ns;  // the image's start: pairs the file with its .lsprof
  double ticks_per_second;             // the clock's rate (ticks of TraceEvent::ticks)
  uint64_t ns_per_tick_q32;            // the runtime's own conversion: ns = ticks * it >> 32
  uint64_t start_ticks;                // the clock when the file was opened
  uint64_t process_start_ticks;        // the clock when the image's runtime started (time 0)
  uint64_t min_wait_ticks;             // --min-wait: shorter waits' events were not written
  // Written by the thread, read by anyone (atomically, 8-byte aligned):
  uint64_t written;  // events ever appended (published after the event)
  uint64_t dropped;  // events not appended: the buffer was full (not a ring)
  uint64_t filtered; // events left out by min_wait_ticks
  uint32_t closed;   // 1: the thread is gone or the process ended normally
  uint32_t reserved;
};
static_assert(sizeof(TraceHeader) == 120);
static_assert(offsetof(TraceHeader, written) % 8 == 0);

enum class TraceKind : uint8_t {
  kCall = 1,         // an operation returned (acquire, release, wait, signal, post) at `ticks`
  kWaitBegin = 2,    // a wait began at `ticks`; its kCall (same object and operation) follows
  kThreadStart = 3,  // object: 0; value: the tid
  kThreadName = 4,   // site: the first 8 bytes of the name, object: the next 8 (NUL-padded)
  kThreadExit = 5,   // the thread's exit destructor ran (it may still lock after it)
  kFork = 6,         // the thread is about to fork (in the parent); value: its tid
  kExec = 7,         // the image is about to be replaced
  kHoldPause = 8,    // object: a mutex a condition wait let go of at `ticks` (its hold pauses)
  kHoldResume = 9,   // object: that mutex, held again as the wait returns at `ticks`
  kLast = kHoldResume,
};

// An event of the program's calls (not of its threads' lives).
constexpr bool is_call_event(TraceKind kind) {
  return kind == TraceKind::kCall || kind == TraceKind::kWaitBegin;
}

enum TraceEventFlags : uint8_t {
  kTraceWaited = 1,   // kCall: it blocked; the wait began at the matching kWaitBegin
  kTraceFailed = 2,   // kCall: returned an error (timeout included: see kTraceTimedOut)
  kTraceArrivedLast = 4,  // barrier: this arrival completed it
  kTraceWithWaiters = 8,  // signal, broadcast, post: a thread was seen waiting
  kTraceNoWaiters = 16,   // ... none was (neither flag: not known)
  kTraceTimedOut = 32,    // kCall with kTraceFailed: the error was ETIMEDOUT (time spent waiting)
  kTraceOwnerChanged = 64,  // an exclusive acquisition (kCall, or kHoldResume: a condition wait's
                            // re-take) from another thread than its last owner: a HANDOFF
};

struct TraceEvent {
  uint64_t ticks;
  uint64_t object;    // the lock, condvar, semaphore or barrier's address
  uint64_t site;      // the return address into the program
  uint32_t value;     // the lock's generation (kThreadStart: the tid; kFork: 0)
  uint16_t operation; // format::Operation (kCall, kWaitBegin)
  uint8_t kind;       // TraceKind
  uint8_t flags;      // TraceEventFlags
};
static_assert(sizeof(TraceEvent) == 32);

}  // namespace lockscope::format
