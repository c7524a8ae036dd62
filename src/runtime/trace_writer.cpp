#include "runtime/trace_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "common/decimal_text.h"
#include "runtime/runtime_state.h"

namespace lockscope::runtime {
namespace {

// "<dir>/<pid>-<start ns>.<n>.lstrace"; false when it does not fit.
bool trace_path(char* out, size_t size, uint32_t number) {
  const Runtime& rt = g_runtime;
  size_t at = 0;
  for (const char* p = rt.directory; *p; ++p) {
    if (at + 1 >= size) return false;
    out[at++] = *p;
  }
  if (at + 1 >= size) return false;
  out[at++] = '/';
  if ((at = append_decimal(out, at, size, rt.pid)) + 1 >= size) return false;
  out[at++] = '-';
  if ((at = append_decimal(out, at, size, rt.start_realtime_ns)) + 1 >= size) return false;
  out[at++] = '.';
  if ((at = append_decimal(out, at, size, number)) >= size) return false;
  for (const char* p = format::kTraceSuffix; *p; ++p) {
    if (at + 1 >= size) return false;
    out[at++] = *p;
  }
  out[at] = '\0';
  return true;
}

}  // namespace

bool open_trace(TraceBuffer& buffer, uint32_t tid, uint64_t now_ticks) {
  Runtime& rt = g_runtime;
  std::memset(&buffer, 0, sizeof(buffer));
  const int saved_errno = errno;
  char path[4200];
  const uint32_t number = rt.trace_files.fetch_add(1, std::memory_order_relaxed) + 1;
  const TraceLayout layout = rt.trace.layout;
  const uint64_t events_offset = format::kTraceHeaderSize + trace_key_bytes(layout.keys);
  const size_t bytes = events_offset + layout.slots * sizeof(uint64_t);
  int fd = -1;
  void* mapped = MAP_FAILED;
  format::TraceHeader header_value{};
  format::TraceHeader* header = &header_value;
  std::memcpy(header->magic, format::kTraceMagic, sizeof(header->magic));
  header->version = format::kTraceVersion;
  header->header_size = format::kTraceHeaderSize;
  header->event_size = sizeof(uint64_t);
  header->flags = rt.trace.ring ? uint32_t{format::kTraceRing} : 0u;
  header->capacity = layout.slots;
  header->pid = rt.pid;
  header->tid = tid;
  header->process_start_realtime_ns = rt.start_realtime_ns;
  header->ticks_per_second = rt.clock.ticks_per_second;
  header->ns_per_tick_q32 = rt.clock.ns_per_tick_q32;
  header->start_ticks = now_ticks;
  header->process_start_ticks = rt.start_ticks;
  header->min_wait_ticks = rt.trace.min_wait_ticks;
  header->keys_offset = format::kTraceHeaderSize;
  header->events_offset = events_offset;
  header->key_size = sizeof(format::TraceKey);
  header->key_capacity = layout.keys;
  // No readahead (MADV_RANDOM): a first store into a page of a file mapping faults it in as a
  // read, and readahead then zeroed far more than the page (~8 ms a thread here, for a thread
  // that may lock once; 2,000 short threads took 16.6 s instead of 1.0 s). Every page is new and
  // written once, in order, so readahead had nothing to offer the events either. The header is
  // written with pwrite, before the mapping exists.
  if (trace_path(path, sizeof(path), number) &&
      (fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) >= 0 &&
      ftruncate(fd, static_cast<off_t>(bytes)) == 0 &&
      pwrite(fd, header, sizeof(*header), 0) == static_cast<ssize_t>(sizeof(*header)))
    mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (fd >= 0) close(fd);
  if (mapped != MAP_FAILED) madvise(mapped, bytes, MADV_RANDOM);
  errno = saved_errno;
  if (mapped == MAP_FAILED) return false;
  header = static_cast<format::TraceHeader*>(mapped);
  buffer.header = header;
  buffer.keys =
      reinterpret_cast<format::TraceKey*>(static_cast<char*>(mapped) + format::kTraceHeaderSize);
  buffer.slots = reinterpret_cast<uint64_t*>(static_cast<char*>(mapped) + events_offset);
  buffer.capacity = layout.slots;
  buffer.key_capacity = layout.keys;
  buffer.base = now_ticks;
  buffer.mapped_bytes = bytes;
  return true;
}

void mark_trace_closed(TraceBuffer& buffer) {
  if (buffer.header) __atomic_store_n(&buffer.header->closed, 1u, __ATOMIC_RELEASE);
}

void close_trace(TraceBuffer& buffer) {
  mark_trace_closed(buffer);
  forget_trace(buffer);
}

void forget_trace(TraceBuffer& buffer) {
  const int saved_errno = errno;
  if (void* mapped = buffer.header ? buffer.header : buffer.parked)
    munmap(mapped, buffer.mapped_bytes);
  if (buffer.index) munmap(buffer.index, (size_t{buffer.index_mask} + 1) * sizeof(uint32_t));
  errno = saved_errno;
  std::memset(&buffer, 0, sizeof(buffer));
}

void park_trace(TraceBuffer& buffer) {
  if (buffer.header == nullptr) return;
  buffer.parked = buffer.header;
  buffer.header = nullptr;
}

void unpark_trace(TraceBuffer& buffer) {
  if (buffer.parked == nullptr) return;
  buffer.header = buffer.parked;
  buffer.parked = nullptr;
}

void mark_process_traces_closed(bool from_signal) {
  Runtime& rt = g_runtime;
  InsideLockscope inside;  // the merge lock is internal
  if (from_signal ? !rt.merge_lock.try_lock_for(100) : (rt.merge_lock.lock(), false)) return;
  for (size_t i = 0; i < rt.threads.slot_count(); ++i) mark_trace_closed(rt.threads.slot(i).trace);
  rt.merge_lock.unlock();
}

}  // namespace lockscope::runtime
