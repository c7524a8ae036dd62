// A thread's trace file made in the profile directory (its name, its header from the process's
// clock and settings, its pages supplied ahead of the stores), and the process's files marked
// complete at its end: the parts of trace mode's writer that read the runtime's state, above the
// buffer's own code (trace_writer.cpp, trace_slots.cpp), which the thread slots hold.
#include "runtime/trace_files.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "common/decimal_text.h"
#include "runtime/cancellation.h"
#include "runtime/errno_guard.h"
#include "runtime/file_size_limit.h"
#include "runtime/runtime_state.h"
#include "runtime/trace_writer.h"

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

// 256 KiB of zeros to write from: an anonymous read-only mapping, which reads as the kernel's zero
// page and so costs no memory. Made once, by the first thread that needs it.
constexpr size_t kZerosBytes = 262144;
std::atomic<const void*> g_zeros{nullptr};

const void* zeros() {
  if (const void* made = g_zeros.load(std::memory_order_acquire)) return made;
  void* mapped = mmap(nullptr, kZerosBytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return nullptr;
  const void* expected = nullptr;
  if (!g_zeros.compare_exchange_strong(expected, mapped, std::memory_order_acq_rel)) {
    munmap(mapped, kZerosBytes);  // another thread's came first
    return expected;
  }
  return mapped;
}

// TraceBuffer::supply: the file opened again by its name for the write (a thread keeps no
// descriptor open, which would count against the program's own limit), and checked to be the
// thread's file. Never past RLIMIT_FSIZE (the write would raise SIGXFSZ, which ends the program;
// stores through the mapping are not held to it). A file that cannot be opened or written is left
// to populate_trace, which finds out whether its pages can be had.
void supply_trace_pages(TraceBuffer& buffer, uint64_t offset, uint64_t bytes) {
  NoCancellation no_cancellation;  // no cancellation point of ours (cancellation.h)
  const ErrnoGuard keep_errno;
  char path[4200];
  const void* source = zeros();
  if (source == nullptr || offset + bytes > file_size_limit() ||
      !trace_path(path, sizeof(path), buffer.file_number))
    return;
  const int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd >= 0) {
    __atomic_store_n(&buffer.supply_fd_plus_one, fd + 1, __ATOMIC_RELAXED);
    bool same = buffer.file.is(fd);
    while (same && bytes != 0) {
      const ssize_t done =
          pwrite(fd, source, bytes < kZerosBytes ? bytes : kZerosBytes, static_cast<off_t>(offset));
      if (done < 0 && errno == EINTR) continue;
      if (done <= 0) break;
      offset += static_cast<uint64_t>(done);
      bytes -= static_cast<uint64_t>(done);
    }
    __atomic_store_n(&buffer.supply_fd_plus_one, 0, __ATOMIC_RELAXED);  // before the close
    close(fd);
  }
}

// File systems whose page cache a write fills in large folios, and whose close does not flush
// (NFS's would write the file out at each step).
bool supplies_pages(int fd) {
  struct statfs system {};
  if (fstatfs(fd, &system) != 0) return false;
  switch (static_cast<unsigned long>(system.f_type)) {
    case 0xEF53:      // ext2/3/4
    case 0x58465342:  // XFS
    case 0x9123683E:  // Btrfs
    case 0x01021994:  // tmpfs
      return true;
    default:
      return false;
  }
}

}  // namespace

bool open_trace(TraceBuffer& buffer, uint32_t tid, uint64_t now_ticks) {
  NoCancellation no_cancellation;  // no cancellation point of ours (cancellation.h)
  Runtime& rt = g_runtime;
  std::memset(&buffer, 0, sizeof(buffer));
  const ErrnoGuard keep_errno;
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
  // A file the program's file size limit allows (ftruncate past it would raise SIGXFSZ): a
  // smaller one when it is below the asked size, none when below the smallest.
  TraceLayout layout = rt.trace.layout;
  const uint64_t limit = file_size_limit();
  if (trace_file_bytes(layout) > limit) layout = trace_layout_for(limit);
  if (trace_file_bytes(layout) > limit) return false;
  int fd = -1;
  const bool mapped = trace_path(path, sizeof(path), number) &&
                      (fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) >= 0 &&
                      (fchmod(fd, 0644), true) &&  // readable whatever the program's umask
                      map_trace_file(buffer, fd, header, layout);
  FileIdentity file{};
  if (mapped && supplies_pages(fd) && (file = FileIdentity::of(fd)).known) {
    buffer.supply = supply_trace_pages;
    buffer.file_number = number;
    buffer.file = file;
  }
  if (fd >= 0) close(fd);
  return mapped;
}

void mark_process_traces_closed(bool from_signal) {
  Runtime& rt = g_runtime;
  InsideLockscope inside;                           // the merge lock is internal
  if (rt.merge_lock.held_by_this_thread()) return;  // a handler that interrupted its holder
  if (from_signal ? !rt.merge_lock.try_lock_for(100) : (rt.merge_lock.lock(), false)) return;
  for (size_t i = 0; i < rt.threads.slot_count(); ++i) mark_trace_closed(rt.threads.slot(i).trace);
  rt.merge_lock.unlock();
}

}  // namespace lockscope::runtime