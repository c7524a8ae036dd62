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
  const uint64_t capacity = rt.trace.capacity;
  const size_t bytes = format::kTraceHeaderSize + capacity * sizeof(format::TraceEvent);
  int fd = -1;
  void* mapped = MAP_FAILED;
  format::TraceHeader header_value{};
  format::TraceHeader* header = &header_value;
  std::memcpy(header->magic, format::kTraceMagic, sizeof(header->magic));
  header->version = format::kTraceVersion;
  header->header_size = format::kTraceHeaderSize;
  header->event_size = sizeof(format::TraceEvent);
  header->flags = rt.trace.ring ? uint32_t{format::kTraceRing} : 0u;
  header->capacity = capacity;
  header->pid = rt.pid;
  header->tid = tid;
  header->process_start_realtime_ns = rt.start_realtime_ns;
  header->ticks_per_second = rt.clock.ticks_per_second;
  header->ns_per_tick_q32 = rt.clock.ns_per_tick_q32;
  header->start_ticks = now_ticks;
  header->process_start_ticks = rt.start_ticks;
  header->min_wait_ticks = rt.trace.min_wait_ticks;
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
  buffer.events = reinterpret_cast<format::TraceEvent*>(static_cast<char*>(mapped) +
                                                        format::kTraceHeaderSize);
  buffer.capacity = capacity;
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
  if (void* mapped = buffer.header ? buffer.header : buffer.parked) {
    const int saved_errno = errno;
    munmap(mapped, buffer.mapped_bytes);
    errno = saved_errno;
  }
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

bool populate_trace(TraceBuffer& buffer) {
  // 64 KiB at a time (2,048 events): one system call for many pages, which the kernel zeroes
  // anyway. After a ring's first lap every page is populated.
  constexpr uint64_t kStep = 65536 / sizeof(format::TraceEvent);
  if (buffer.populated >= buffer.capacity) return true;
  uint64_t end = buffer.populated + kStep;
  if (end > buffer.capacity) end = buffer.capacity;
  const int saved_errno = errno;
  const bool ok = madvise(buffer.events + buffer.populated,
                          (end - buffer.populated) * sizeof(format::TraceEvent),
                          MADV_POPULATE_WRITE) == 0;
  const bool unsupported = !ok && errno == EINVAL;  // a kernel before 5.14: stores fault pages in
  errno = saved_errno;
  if (unsupported) end = buffer.capacity;
  else if (!ok) return !(buffer.refused = true);
  buffer.populated = end;
  return true;
}

}  // namespace lockscope::runtime
