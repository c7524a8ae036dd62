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
  format::TraceHeader header{};
  header.flags = rt.trace.ring ? uint32_t{format::kTraceRing} : 0u;
  header.pid = rt.pid;
  header.tid = tid;
  header.process_start_realtime_ns = rt.start_realtime_ns;
  header.ticks_per_second = rt.clock.ticks_per_second;
  header.ns_per_tick_q32 = rt.clock.ns_per_tick_q32;
  header.start_ticks = now_ticks;
  header.process_start_ticks = rt.start_ticks;
  header.min_wait_ticks = rt.trace.min_wait_ticks;
  int fd = -1;
  const bool mapped = trace_path(path, sizeof(path), number) &&
                      (fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) >= 0 &&
                      map_trace_file(buffer, fd, header, rt.trace.layout);
  if (fd >= 0) close(fd);
  errno = saved_errno;
  return mapped;
}

void mark_trace_closed(TraceBuffer& buffer) {
  if (buffer.header) __atomic_store_n(&buffer.header->closed, 1u, __ATOMIC_RELEASE);
}

void close_trace(TraceBuffer& buffer) {
  mark_trace_closed(buffer);
  forget_trace(buffer);
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
