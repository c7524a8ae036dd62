// Trace mode's writer (record --trace): each thread appends timestamped events to a file of its
// own, mapped shared, so that the page cache holds every event the moment it is written and a
// process killed by SIGKILL keeps them all (common/trace_format.h has the layout).
//
// This is the buffer's code, free of the runtime's state (a thread's slot holds its TraceBuffer);
// the file's making and the process's end are trace_files.h's.
//
// Only the thread itself appends to its file, from code marked inside lockscope (a signal handler
// that interrupts an append passes through), so an append is two plain stores and a release store
// of the count. Files are opened when a thread registers, closed when the kernel says it is gone,
// and forgotten (unmapped, untouched) in a fork child, whose threads open files of their own.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/operations.h"
#include "common/runtime_config.h"
#include "common/trace_format.h"
#include "runtime/file_identity.h"

namespace lockscope::runtime {

// What a trace file of `bytes` holds: a key table of a 256th of it (64 keys at least, at most
// format::kTraceMaxKeys), and slots (8 bytes each) for the rest, 64 at least.
struct TraceLayout {
  uint64_t slots;
  uint32_t keys;
};
constexpr uint64_t trace_key_bytes(uint32_t keys) {
  return (uint64_t{keys} * sizeof(format::TraceKey) + 4095) / 4096 * 4096;
}
constexpr TraceLayout trace_layout_for(uint64_t bytes) {
  uint64_t keys = bytes / 256;
  if (keys < 64) keys = 64;
  if (keys > format::kTraceMaxKeys) keys = format::kTraceMaxKeys;
  const uint64_t fixed = format::kTraceHeaderSize + trace_key_bytes(static_cast<uint32_t>(keys));
  const uint64_t slots = bytes > fixed ? (bytes - fixed) / sizeof(uint64_t) : 0;
  return {slots < 64 ? 64 : slots, static_cast<uint32_t>(keys)};
}

// The bytes of a file of `layout`.
constexpr uint64_t trace_file_bytes(const TraceLayout& layout) {
  return format::kTraceHeaderSize + trace_key_bytes(layout.keys) + layout.slots * sizeof(uint64_t);
}

struct TraceSettings {
  bool enabled = false;  // config trace=1
  bool ring = false;     // config trace_ring=1: a full file overwrites its oldest events
  TraceLayout layout = trace_layout_for(config::kDefaultTraceSize);  // config trace_size=BYTES
  uint64_t min_wait_ns = config::kDefaultMinWaitNs;  // config min_wait_ns=N: only waits that long
  uint64_t min_wait_ticks = 0;  // the same in clock ticks, set once the clock is known
};

// A thread's open trace file; all zero when it has none.
struct TraceBuffer {
  format::TraceHeader* header;
  format::TraceKey* keys;  // the file's key table
  uint64_t* slots;
  uint64_t capacity;  // slots
  uint64_t written;   // the thread's own copy of header->written
  uint64_t position;  // written % capacity
  uint64_t base;      // the ticks of the latest event (the next one's step counts from here)
  uint64_t filtered;
  uint64_t anchors;
  size_t mapped_bytes;
  // Slots (and keys) whose pages were written ahead (populate_trace): a store into a page of a
  // shared file mapping that the file system cannot back (disk or quota full) raises SIGBUS, so
  // nothing is stored before its page was populated without a fault.
  uint64_t populated;
  uint32_t keys_populated;
  uint32_t key_count;  // keys written
  uint32_t key_capacity;
  // The key table's index in the thread's memory: key numbers by hash of the key (0: empty),
  // open addressing, `index_mask` + 1 entries, at most a quarter used (grown by doubling). Its
  // mapping starts kIndexHeader bytes before it, with the mapping's size (so that a fork child,
  // which may see the pointer of a new index with the mask of the old, unmaps what is mapped).
  uint32_t* index;
  uint32_t index_mask;
  // Writes `bytes` of zeros into the file at `offset`, ahead of populate_trace's madvise: the
  // kernel then supplies the page cache in large folios, where a first store (or the madvise)
  // takes a page at a time (measured here, 6.18, ext4, a guest: 2 us a 4 KiB page instead of
  // 7.3, so 4 ns an event instead of 14). Only past a thread's first MiB of slots (a busy
  // thread: a system call per 32,768 events), on a local file system. Best effort; nullptr: not
  // done.
  void (*supply)(TraceBuffer& buffer, uint64_t offset, uint64_t bytes);
  uint32_t file_number;  // the n of its name (trace_writer.cpp)
  // The descriptor supply has open (+ 1; 0: none), for a fork child to close: another thread's
  // supply may be in progress when the program forks.
  int supply_fd_plus_one;
  FileIdentity file;  // what supply checks it opened
  bool refused;       // the file system refused the next pages: the file is full from there
  // While the thread forks: `header` is parked here (appends see none), so that nothing the child
  // runs before lockscope's own fork handler (another library's handlers) writes into the parent's
  // file, which the child inherits mapped.
  format::TraceHeader* parked;
};

// Sizes the open file `fd` for `layout`, writes `header` (with the layout's fields filled in) and
// maps the file into `buffer`; false when the system refused (errno not kept).
bool map_trace_file(TraceBuffer& buffer, int fd, format::TraceHeader header, TraceLayout layout);
// The thread is gone (or the process ends normally): marks the file closed and unmaps it.
void close_trace(TraceBuffer& buffer);
// Marks the file closed, leaving it mapped: the process is about to end, a thread may still write.
void mark_trace_closed(TraceBuffer& buffer);
// Makes the pages of the next slots writable without a fault (MADV_POPULATE_WRITE); false when
// the file system refused them (the file is then full: later events are dropped and counted).
bool populate_trace(TraceBuffer& buffer);
// A key the index does not have (trace_key looked): written into the file's table, and its number
// returned; 0 when the table is full or its next page was refused (the event is then dropped and
// counted).
uint32_t trace_key_slow(TraceBuffer& buffer, const format::TraceKey& key, uint32_t hash);
// In a fork child: the mapping is the parent's file, which the child must not write. Unmaps it.
void forget_trace(TraceBuffer& buffer);
// Around a fork, in the forking thread: appends stop before it, and resume after it in the parent.
void park_trace(TraceBuffer& buffer);
void unpark_trace(TraceBuffer& buffer);

inline constexpr size_t kIndexHeader = 64;

inline uint32_t trace_key_hash(uint64_t object, uint64_t site, uint32_t value, uint16_t op) {
  uint64_t h = object * 0x9E3779B97F4A7C15ull;
  h ^= (site + (uint64_t{op} << 48) + value) * 0xC2B2AE3D27D4EB4Full;
  return static_cast<uint32_t>(h >> 32);
}
inline uint32_t trace_key_hash(const format::TraceKey& key) {
  return trace_key_hash(key.object, key.site, key.value, key.operation);
}

// The key's number, for a key the thread used before: a probe of the index, rarely two (it is at
// most a quarter full). The key's fields come as values (a key built in memory just before would
// be read back across two stores of different widths, which the CPU cannot forward: a stall of a
// dozen cycles an event).
__attribute__((always_inline)) inline uint32_t trace_key(TraceBuffer& buffer, uint64_t object,
                                                         uint64_t site, uint32_t value,
                                                         uint16_t op) {
  const uint32_t hash = trace_key_hash(object, site, value, op);
  if (buffer.index)
    for (uint32_t at = hash;; ++at) {
      const uint32_t number = buffer.index[at & buffer.index_mask];
      if (number == 0) break;
      const format::TraceKey& found = buffer.keys[number - 1];
      if (found.object == object && found.site == site && found.value == value &&
          found.operation == op)
        return number;
    }
  return trace_key_slow(buffer, format::TraceKey{object, site, value, op, 0}, hash);
}

// Appends the event's slot, after an anchor when one is due; false when the file is full (not a
// ring) or refused its next page.
__attribute__((always_inline)) inline bool store_trace_slot(TraceBuffer& buffer, uint64_t ticks,
                                                            uint64_t slot) {
  const bool ring = buffer.header->flags & format::kTraceRing;
  const int64_t step = static_cast<int64_t>(ticks - buffer.base);
  const bool far = step != static_cast<int32_t>(step);
  const bool anchor = far || (ring && buffer.position % format::kTraceAnchorEvery == 0);
  uint64_t needed = buffer.written + 1 + anchor;
  if (needed > buffer.capacity) {
    if (!ring) return false;
    needed = buffer.capacity;
  }
  if (needed > buffer.populated &&
      (buffer.refused || !populate_trace(buffer) || needed > buffer.populated))
    return false;
  if (anchor) {  // the next step counts from the latest event, or (far) is the event's own time
    buffer.slots[buffer.position] = format::trace_anchor_slot(far ? ticks : buffer.base);
    if (++buffer.position == buffer.capacity) buffer.position = 0;
    ++buffer.written;
    __atomic_store_n(&buffer.header->anchors, ++buffer.anchors, __ATOMIC_RELAXED);
    if (far) slot &= 0xFFFFFFFFull;  // step 0
  }
  buffer.base = ticks;
  buffer.slots[buffer.position] = slot;
  if (++buffer.position == buffer.capacity) buffer.position = 0;
  ++buffer.written;
  __atomic_store_n(&buffer.header->written, buffer.written, __ATOMIC_RELEASE);
  return true;
}

inline void count_trace_dropped(TraceBuffer& buffer) {
  __atomic_store_n(&buffer.header->dropped, buffer.header->dropped + 1, __ATOMIC_RELAXED);
}

// An event on `object` at `site` (its key: object, site, operation, value).
__attribute__((always_inline)) inline void append_trace(TraceBuffer& buffer, format::TraceKind kind,
                                                        uint64_t ticks, const void* object,
                                                        uintptr_t site, format::Operation op,
                                                        uint32_t value, uint8_t flags) {
  if (buffer.header == nullptr) return;
  const uint32_t key =
      trace_key(buffer, reinterpret_cast<uint64_t>(object), site, value, static_cast<uint16_t>(op));
  if (key == 0) {
    if (buffer.key_count >= buffer.key_capacity)  // else the file system refused the page
      __atomic_store_n(&buffer.header->dropped_no_key, buffer.header->dropped_no_key + 1,
                       __ATOMIC_RELAXED);
    return count_trace_dropped(buffer);
  }
  const auto step = static_cast<int32_t>(static_cast<uint32_t>(ticks - buffer.base));
  if (!store_trace_slot(buffer, ticks,
                        format::trace_slot(static_cast<uint8_t>(kind), flags, key, step)))
    count_trace_dropped(buffer);
}

// A thread event (no key): kThreadStart, kThreadExit, kFork, kExec.
__attribute__((always_inline)) inline void append_thread_trace(TraceBuffer& buffer,
                                                               format::TraceKind kind,
                                                               uint64_t ticks) {
  if (buffer.header == nullptr) return;
  const auto step = static_cast<int32_t>(static_cast<uint32_t>(ticks - buffer.base));
  if (!store_trace_slot(buffer, ticks, format::trace_slot(static_cast<uint8_t>(kind), 0, 0, step)))
    count_trace_dropped(buffer);
}

inline void count_filtered(TraceBuffer& buffer) {
  if (buffer.header == nullptr) return;
  __atomic_store_n(&buffer.header->filtered, ++buffer.filtered, __ATOMIC_RELAXED);
}

}  // namespace lockscope::runtime
