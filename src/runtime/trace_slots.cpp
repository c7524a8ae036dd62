// The trace file's slots and key table (trace_writer.h): pages made writable ahead of the stores,
// and the keys' numbers. Apart from the file's life (trace_writer.cpp), and free of the runtime's
// state, so that the unit tests write and read a file through the very code the runtime uses.
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "runtime/cancellation.h"
#include "runtime/errno_guard.h"
#include "runtime/trace_writer.h"

namespace lockscope::runtime {

namespace {

// Makes items [done, end) of `count` items of `size` bytes at `base` writable (one system call for
// many pages, which the kernel zeroes anyway); false when refused. The range starts at the page
// that holds `done` (madvise takes only a page-aligned start, and a 24-byte key's step may end
// mid-page), which is inside the file's one mapping.
template <typename Count>
bool populate(char* base, size_t size, Count& done, Count end, Count count, bool& refused) {
  if (end > count) end = count;
  const ErrnoGuard keep_errno;
  const uintptr_t page = static_cast<uintptr_t>(getpagesize());
  const uintptr_t from = reinterpret_cast<uintptr_t>(base + uint64_t{done} * size) & ~(page - 1);
  const uintptr_t to = reinterpret_cast<uintptr_t>(base + uint64_t{end} * size);
  const bool ok = madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE) == 0;
  const bool unsupported = !ok && errno == EINVAL;  // a kernel before 5.14: stores fault pages in
  if (unsupported)
    end = count;
  else if (!ok)
    return !(refused = true);
  done = end;
  return true;
}

// Unmaps an index (nullptr: none), by the size its mapping holds.
void unmap_index(uint32_t* index) {
  if (index == nullptr) return;
  char* mapped = reinterpret_cast<char*>(index) - kIndexHeader;
  munmap(mapped, *reinterpret_cast<size_t*>(mapped));
}

// Items of `size` bytes to populate next when `done` are: as many bytes as are done already, from
// `least` to `most`: a thread that locks a few times pays for a few pages, a busy one makes few
// system calls.
uint64_t next_step(uint64_t done, size_t size, uint64_t least, uint64_t most) {
  uint64_t bytes = done * size;
  if (bytes < least) bytes = least;
  if (bytes > most) bytes = most;
  return bytes / size;
}

// A new index of `entries` (a power of two) with every key written so far; false when the
// kernel refused memory (the old index stays).
bool grow_index(TraceBuffer& buffer, uint32_t entries) {
  const size_t bytes = kIndexHeader + size_t{entries} * sizeof(uint32_t);
  const ErrnoGuard keep_errno;
  void* mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return false;
  *static_cast<size_t*>(mapped) = bytes;
  auto* index = reinterpret_cast<uint32_t*>(static_cast<char*>(mapped) + kIndexHeader);
  const uint32_t mask = entries - 1;
  for (uint32_t number = 1; number <= buffer.key_count; ++number) {
    uint32_t at = trace_key_hash(buffer.keys[number - 1]) & mask;
    while (index[at] != 0) at = (at + 1) & mask;
    index[at] = number;
  }
  // The new index is in place before the old one goes: a fork child sees one that is mapped.
  uint32_t* const old = buffer.index;
  __atomic_store_n(&buffer.index, index, __ATOMIC_RELEASE);
  buffer.index_mask = mask;
  unmap_index(old);
  return true;
}

}  // namespace

bool populate_trace(TraceBuffer& buffer) {
  // After a ring's first lap every page is populated.
  if (buffer.populated >= buffer.capacity) return true;
  // From 16 KiB (a short thread's few events) doubling to 256 KiB. The pages are written first
  // (TraceBuffer::supply), when the writer can.
  uint64_t end = buffer.populated + next_step(buffer.populated, sizeof(uint64_t), 16384, 262144);
  if (end > buffer.capacity) end = buffer.capacity;
  constexpr uint64_t kSupplyFrom = (uint64_t{1} << 20) / sizeof(uint64_t);
  if (buffer.supply && buffer.populated >= kSupplyFrom)
    buffer.supply(buffer, buffer.header->events_offset + buffer.populated * sizeof(uint64_t),
                  (end - buffer.populated) * sizeof(uint64_t));
  return populate(reinterpret_cast<char*>(buffer.slots), sizeof(uint64_t), buffer.populated, end,
                  buffer.capacity, buffer.refused);
}

uint32_t trace_key_slow(TraceBuffer& buffer, const format::TraceKey& key, uint32_t hash) {
  if (buffer.key_count >= buffer.key_capacity || buffer.refused) return 0;
  if (buffer.key_count >= buffer.keys_populated &&
      !populate(reinterpret_cast<char*>(buffer.keys), sizeof(format::TraceKey),
                buffer.keys_populated,
                buffer.keys_populated +
                    static_cast<uint32_t>(
                        next_step(buffer.keys_populated, sizeof(format::TraceKey), 4096, 65536)),
                buffer.key_capacity, buffer.refused))
    return 0;
  const uint32_t entries = buffer.index ? buffer.index_mask + 1 : 0;
  if ((buffer.key_count + 1) * 4 > entries && !grow_index(buffer, entries ? entries * 2 : 1024))
    return 0;
  const uint32_t number = buffer.key_count + 1;
  buffer.keys[number - 1] = key;
  uint32_t at = hash & buffer.index_mask;
  while (buffer.index[at] != 0) at = (at + 1) & buffer.index_mask;
  buffer.index[at] = number;
  buffer.key_count = number;
  // Before any slot names it: the slot's `written` (release) publishes the key with it.
  __atomic_store_n(&buffer.header->keys, uint64_t{number}, __ATOMIC_RELAXED);
  return number;
}

bool map_trace_file(TraceBuffer& buffer, int fd, format::TraceHeader header, TraceLayout layout) {
  NoCancellation no_cancellation;  // no cancellation point of ours (cancellation.h)
  std::memset(&buffer, 0, sizeof(buffer));
  const uint64_t events_offset = format::kTraceHeaderSize + trace_key_bytes(layout.keys);
  const size_t bytes = trace_file_bytes(layout);
  std::memcpy(header.magic, format::kTraceMagic, sizeof(header.magic));
  header.version = format::kTraceVersion;
  header.header_size = format::kTraceHeaderSize;
  header.event_size = sizeof(uint64_t);
  header.capacity = layout.slots;
  header.keys_offset = format::kTraceHeaderSize;
  header.events_offset = events_offset;
  header.key_size = sizeof(format::TraceKey);
  header.key_capacity = layout.keys;
  // No readahead (MADV_RANDOM): a first store into a page of a file mapping faults it in as a
  // read, and readahead then zeroed far more than the page (~8 ms a thread here, for a thread
  // that may lock once; 2,000 short threads took 16.6 s instead of 1.0 s). Every page is new and
  // written once, in order, so readahead had nothing to offer the events either. The header is
  // written with pwrite, before the mapping exists.
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0 ||
      pwrite(fd, &header, sizeof(header), 0) != static_cast<ssize_t>(sizeof(header)))
    return false;
  void* mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mapped == MAP_FAILED) return false;
  madvise(mapped, bytes, MADV_RANDOM);
  buffer.header = static_cast<format::TraceHeader*>(mapped);
  buffer.keys =
      reinterpret_cast<format::TraceKey*>(static_cast<char*>(mapped) + format::kTraceHeaderSize);
  buffer.slots = reinterpret_cast<uint64_t*>(static_cast<char*>(mapped) + events_offset);
  buffer.capacity = layout.slots;
  buffer.key_capacity = layout.keys;
  buffer.base = header.start_ticks;
  buffer.mapped_bytes = bytes;
  return true;
}

void forget_trace(TraceBuffer& buffer) {
  const ErrnoGuard keep_errno;
  if (void* mapped = buffer.header ? buffer.header : buffer.parked)
    munmap(mapped, buffer.mapped_bytes);
  unmap_index(buffer.index);
  std::memset(&buffer, 0, sizeof(buffer));
}

}  // namespace lockscope::runtime
