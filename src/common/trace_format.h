// The on-disk trace format (record --trace): one append-only file per thread, mapped shared by the
// runtime, so that what the thread wrote is in the page cache the moment it is written and a
// process killed by SIGKILL loses nothing it had recorded.
//
// A file is `<pid>-<start ns>.<n>.lstrace` in the profile directory, beside the process image's
// `<pid>-<start ns>.lsprof` (n: the image's 1st, 2nd... thread file). Layout (version 2):
//
//   TraceHeader (one page) | TraceKey[key_capacity] (to a page) | slot[capacity] (8 bytes each)
//
// An event is one 8-byte slot (trace_slot below): its kind, flags, the number of its key (the
// object, site, operation and generation, written once in the key table the first time the
// thread uses them) and its time as a signed 32-bit step from the event before it. An anchor slot
// sets the time from which the next step counts: where a step does not fit 32 bits, and in a ring
// at every 512th slot (so that a reader of a ring, whose oldest slots were overwritten, finds
// one within two pages of where it starts). Events are a quarter of version 1's 32 bytes, and so
// are the fresh pages of the file the kernel must supply and zero, which were most of trace mode's
// cost.
//
// The writer stores slot i at index i % capacity, then publishes `written` = i + 1 (release), so a
// reader trusts the first min(written, capacity) slots; in a ring (kTraceRing) that are the last
// `capacity` ones. A key is written (and `keys` raised) before the first slot that names it. An
// event being written when the process was killed is not counted. `closed` is set when the thread
// is known to be gone or the process wrote its final profile: a file of a process whose profile is
// a snapshot (or missing) and not closed was cut short.
//
// Version 1 (still read): TraceHeader (one page) | TraceEvent[capacity], 32 bytes an event.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lockscope::format {

inline constexpr char kTraceMagic[8] = {'L', 'K', 'S', 'T', 'R', 'A', 'C', 'E'};
inline constexpr uint32_t kTraceVersion = 2;
inline constexpr uint32_t kTraceVersion1 = 1;  // 32-byte events, no key table
inline constexpr char kTraceSuffix[] = ".lstrace";
inline constexpr uint32_t kTraceHeaderSize = 4096;

enum TraceFlags : uint32_t {
  kTraceRing = 1,  // a full buffer overwrites its oldest events (else: later events are dropped)
};

struct TraceHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_size;  // kTraceHeaderSize: events start here
  uint32_t event_size;   // sizeof(TraceEvent)
  uint32_t flags;        // TraceFlags
  uint64_t capacity;     // events the file has room for
  uint32_t pid;
  uint32_t tid;
  uint64_t process_start_realtime_ns;  // the image's start: pairs the file with its .lsprof
  double ticks_per_second;             // the clock's rate (ticks of TraceEvent::ticks)
  uint64_t ns_per_tick_q32;            // the runtime's own conversion: ns = ticks * it >> 32
  uint64_t start_ticks;                // the clock when the file was opened
  uint64_t process_start_ticks;        // the clock when the image's runtime started (time 0)
  uint64_t min_wait_ticks;             // --min-wait: shorter waits' events were not written
  // Written by the thread, read by anyone (atomically, 8-byte aligned):
  uint64_t written;   // events ever appended (published after the event)
  uint64_t dropped;   // events not appended: the buffer was full (not a ring)
  uint64_t filtered;  // events left out by min_wait_ticks
  uint32_t closed;    // 1: the thread is gone or the process ended normally
  uint32_t reserved;
  // Version 2 (a version 1 header ends above): `capacity` and `written` count slots.
  uint64_t keys_offset;    // where the key table starts (kTraceHeaderSize)
  uint64_t events_offset;  // where the slots start (a page boundary after the key table)
  uint32_t key_size;       // sizeof(TraceKey)
  uint32_t key_capacity;   // keys the table has room for (at most kTraceMaxKeys)
  // Written by the thread, read by anyone (atomically):
  uint64_t keys;            // keys written (numbers 1 .. keys)
  uint64_t anchors;         // anchor slots ever written (events written = written - anchors)
  uint64_t dropped_no_key;  // of `dropped`: the key table was full
};
static_assert(sizeof(TraceHeader) == 168);
inline constexpr size_t kTraceHeaderV1Size = 120;
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
  kTraceWaited = 1,         // kCall: it blocked; the wait began at the matching kWaitBegin
  kTraceFailed = 2,         // kCall: returned an error (timeout included: see kTraceTimedOut)
  kTraceArrivedLast = 4,    // barrier: this arrival completed it
  kTraceWithWaiters = 8,    // signal, broadcast, post: a thread was seen waiting
  kTraceNoWaiters = 16,     // ... none was (neither flag: not known)
  kTraceTimedOut = 32,      // kCall with kTraceFailed: the error was ETIMEDOUT (time spent waiting)
  kTraceOwnerChanged = 64,  // an exclusive acquisition (kCall, or kHoldResume: a condition wait's
                            // re-take) from another thread than its last owner: a HANDOFF
};
// A condition or semaphore wait's kCall (with kTraceFailed) carrying both waiter flags, which only
// signals, broadcasts and posts carry and never together: the call was interrupted after waiting
// until then, by a cancellation (pthread_cancel) or a signal handler (EINTR), and its wait counts
// as a timeout's does. (A slot keeps 7 flag bits, all taken.)
inline constexpr uint8_t kTraceInterrupted = kTraceWithWaiters | kTraceNoWaiters;
constexpr bool trace_interrupted(uint8_t flags) {
  return (flags & kTraceInterrupted) == kTraceInterrupted;
}

// An event as version 1 stored it, and as the reader hands on every version's events.
struct TraceEvent {
  uint64_t ticks;
  uint64_t object;     // the lock, condvar, semaphore or barrier's address
  uint64_t site;       // the return address into the program
  uint32_t value;      // the lock's generation (kThreadStart: the tid; kFork: 0)
  uint16_t operation;  // format::Operation (kCall, kWaitBegin)
  uint8_t kind;        // TraceKind
  uint8_t flags;       // TraceEventFlags
};
static_assert(sizeof(TraceEvent) == 32);

// Version 2: what events name by number (kThreadName: its name, in `site` and `object` as above).
struct TraceKey {
  uint64_t object;
  uint64_t site;
  uint32_t value;      // the lock's generation (kCall), the tid (kThreadName), else 0
  uint16_t operation;  // format::Operation
  uint16_t reserved;
};
static_assert(sizeof(TraceKey) == 24);

// A version 2 slot, low bits first: kind (4 bits), flags (7), key number (21; 0: none, as a thread
// event's), step (32, signed: this event's ticks minus the previous event's). An anchor (kind
// kTraceAnchor) holds instead, above its kind, the ticks (60 bits) the next event's step counts
// from. A slot of kind 0 was never written. The thread events' tid (TraceEvent::value) is the
// header's.
inline constexpr uint8_t kTraceAnchor = 15;
inline constexpr uint32_t kTraceMaxKeys = (uint32_t{1} << 21) - 1;
inline constexpr uint32_t kTraceAnchorEvery = 512;  // a ring anchors slots i with i % this == 0
inline constexpr uint64_t kTraceAnchorTicksMask = (uint64_t{1} << 60) - 1;
static_assert(static_cast<uint8_t>(TraceKind::kLast) < kTraceAnchor);

constexpr uint64_t trace_slot(uint8_t kind, uint8_t flags, uint32_t key, int32_t step) {
  return uint64_t{kind} | uint64_t{flags & 0x7Fu} << 4 | uint64_t{key} << 11 |
         uint64_t{static_cast<uint32_t>(step)} << 32;
}
constexpr uint64_t trace_anchor_slot(uint64_t ticks) {
  return uint64_t{kTraceAnchor} | (ticks & kTraceAnchorTicksMask) << 4;
}
constexpr uint8_t trace_slot_kind(uint64_t slot) {
  return slot & 0xF;
}
constexpr uint8_t trace_slot_flags(uint64_t slot) {
  return (slot >> 4) & 0x7F;
}
constexpr uint32_t trace_slot_key(uint64_t slot) {
  return (slot >> 11) & kTraceMaxKeys;
}
constexpr int32_t trace_slot_step(uint64_t slot) {
  return static_cast<int32_t>(slot >> 32);
}
constexpr uint64_t trace_anchor_ticks(uint64_t slot) {
  return slot >> 4;
}

// The thread events (no object, no key).
constexpr bool is_thread_event(TraceKind kind) {
  return kind == TraceKind::kThreadStart || kind == TraceKind::kThreadExit ||
         kind == TraceKind::kFork || kind == TraceKind::kExec;
}

}  // namespace lockscope::format
