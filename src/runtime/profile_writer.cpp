// The profile write: everything recorded, read at one moment (the other threads paused), encoded
// section by section (profile_section_writers.h) and written to a temporary name, then renamed into
// place, so that a reader never sees half a file.
#include "runtime/profile_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/cancellation.h"
#include "runtime/errno_guard.h"
#include "runtime/module_map.h"
#include "runtime/open_at_descriptor_limit.h"
#include "runtime/profile_file_pieces.h"
#include "runtime/profile_section_buffers.h"
#include "runtime/profile_section_writers.h"
#include "runtime/profile_thread_snapshot.h"
#include "runtime/raw_log.h"
#include "runtime/recorder.h"
#include "runtime/runtime_state.h"
#include "runtime/thread_pause.h"
#include "runtime/unloaded_modules.h"

namespace lockscope::runtime {
namespace {

using format::SectionType;

// The name a profile (or a snapshot) is written under before it is renamed into place: hidden,
// in the same directory. False when it does not fit (a directory name near PATH_MAX would be cut
// short, and the cut name could be another file's).
bool temporary_path(const Runtime& rt, bool snapshot, char (&out)[4200]) {
  const int length =
      snprintf(out, sizeof(out), "%s/.%u-%llu%s.tmp", rt.directory, rt.pid,
               static_cast<unsigned long long>(rt.start_realtime_ns), snapshot ? ".snapshot" : "");
  return length >= 0 && length < static_cast<int>(sizeof(out));
}

}  // namespace

bool profile_path(char* out) {
  const Runtime& rt = runtime();
  const int length =
      snprintf(out, 4096, "%s/%u-%llu%s", rt.directory, rt.pid,
               static_cast<unsigned long long>(rt.start_realtime_ns), format::kFileSuffix);
  return length >= 0 && length < 4096;
}

bool write_profile(format::ExitPath exit_path, int exit_status, char* path_out, bool from_signal) {
  NoCancellation no_cancellation;  // no cancellation point of ours (cancellation.h)
  Runtime& rt = runtime();
  const bool interrupted_lockscope = inside_lockscope();
  const uint64_t began_ns = Clock::monotonic_ns();
  InsideLockscope inside;
  const ErrnoGuard keep_errno;  // restored at every return
  // Everything recorded: exited threads (merged) plus live threads' tables, into a scratch table so
  // the recording state is left untouched.
  SiteTable all;
  uint64_t dropped = 0;
  // The module map first, before any lock of ours is held: dl_iterate_phdr takes the loader's
  // lock, and a thread inside dlopen may be waiting for ours (its first lock call registers it).
  ModuleList modules;
  modules.collect();
  append_unloaded_modules(modules);
  // A handler that ends the process (_exit, exit) on a thread that was writing a snapshot, or
  // registering itself, holds the lock already: it would wait for itself, and that book-keeping's
  // end is never reached. Those holds block the thread's signals (signals_blocked.h), so only a
  // fault's handler can come here so.
  if (rt.merge_lock.held_by_this_thread() || rt.file_lock.held_by_this_thread()) {
    // In the file's phase: the snapshot's temporary file would be left behind, half written.
    char temporary[4200];
    if (rt.file_lock.held_by_this_thread() && temporary_path(rt, true, temporary))
      unlink(temporary);
    RawLine()
        .append("profile of pid ")
        .append(rt.pid)
        .append(
            " not written: the process ended while its thread was inside lockscope's own "
            "book-keeping (a snapshot, its registration)")
        .emit();
    return false;
  }
  if (!from_signal) {
    rt.merge_lock.lock();
  } else if (!rt.merge_lock.try_lock_for(interrupted_lockscope ? 0 : 1000)) {
    // The signal interrupted the lock's holder (this thread, or one that never lets go).
    RawLine()
        .append("profile of pid ")
        .append(rt.pid)
        .append(" not written: the signal arrived while lockscope's own lock was held")
        .emit();
    return false;
  }
  rt.threads.take_late_exits();  // threads that left while another write held the lock
  // The other threads stopped at a call boundary (thread_pause.h) until the locks' owner changes
  // and the threads' histograms are read too: one moment's figures.
  const uint32_t not_paused = pause_other_threads(rt);
  uint64_t counter_values[format::kCounterSlots];
  for (uint32_t i = 0; i < format::kCounterSlots; ++i)
    counter_values[i] = rt.counters[i].load(std::memory_order_relaxed);
  ByteBuffer live;
  // The distinct keys are at least the largest table's, and threads of a pool share most of
  // theirs: sized for the gone threads' and the largest live one's, the index grows from there if
  // need be (a sum over 64 workers of one server would map it 64 times too large).
  all.use_huge_pages();  // filled here, off the program's critical sections
  size_t largest = 0;
  for (size_t i = 0; i < rt.threads.slot_count(); ++i)
    if (records_now(rt.threads.slot(i)) && rt.threads.slot(i).sites.used() > largest)
      largest = rt.threads.slot(i).sites.used();
  all.reserve(rt.merged.used() + largest);  // a hint: without the memory, the index grows later
  dropped += all.merge_from(rt.merged);
  dropped += snapshot_threads(rt, all, live, counter_values);

  // The sections' encoders, in the order their record numbers and the shared strings and
  // histograms sections need (profile_section_writers.h).
  SectionBuffers out;
  for (const format::SectionSpec& section : format::kSectionSpecs)  // written whole (byte_buffer.h)
    out.payload(section.type).use_huge_pages_from(ByteBuffer::kSectionHugeFromBytes);
  encode_process(out, rt, exit_path, exit_status);
  encode_process_facts(out, rt);
  encode_modules(out, modules);
  encode_lock_sections(out, rt, modules, all);
  const uint64_t live_threads = encode_threads(out, rt, live);
  const bool pause_held = resume_other_threads(rt);
  // The paused threads gave up waiting (kMaxPauseNs) and went on: those that made calls while the
  // file was assembled were not paused either.
  const uint32_t went_on = pause_held ? 0 : threads_active_since_paused(rt);
  counter_values[static_cast<int>(format::Counter::kThreadsNotPaused)] +=
      went_on > not_paused ? went_on : not_paused;
  counter_values[static_cast<int>(format::Counter::kCallsAfterSnapshot)] =
      calls_since_snapshot(rt, live);
  rt.merge_lock.unlock();
  counter_values[static_cast<int>(format::Counter::kDroppedSites)] += dropped;
  counter_values[static_cast<int>(format::Counter::kThreadsLiveAtExit)] = live_threads;
  counter_values[static_cast<int>(format::Counter::kDroppedLocks)] += rt.locks.retired_dropped();
  counter_values[static_cast<int>(format::Counter::kDroppedOrderEdges)] += rt.order.dropped();
  encode_counters(out, counter_values);
  all.reset();

  FilePieces file;
  file.add_sections(out);
  // Records point into these two by offset: one cut short would leave references dangling.
  // Any other section that ran out of memory keeps the whole records it got, as before.
  if (out.payload<SectionType::kStrings>().failed() ||
      out.payload<SectionType::kHistograms>().failed()) {
    RawLine().append("out of memory while writing the profile of pid ").append(rt.pid).emit();
    return false;
  }

  char temporary[4200];
  const bool named = profile_path(path_out);
  const bool snapshot = exit_path == format::ExitPath::kSnapshot;
  if (!named || !temporary_path(rt, snapshot, temporary)) {
    RawLine()
        .append("profile of pid ")
        .append(rt.pid)
        .append(" not written: its directory's name is too long")
        .emit();
    return false;
  }
  if (from_signal ? !rt.file_lock.try_lock_for(interrupted_lockscope ? 0 : 1000)
                  : (rt.file_lock.lock(), false)) {
    RawLine()
        .append("profile of pid ")
        .append(rt.pid)
        .append(" not written: the signal arrived while its file was being written")
        .emit();
    return false;
  }
  if (snapshot && rt.profile_written.load(std::memory_order_acquire)) {  // the end came first
    rt.file_lock.unlock();
    return false;
  }
  const int fd =
      open_at_descriptor_limit(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  // Readable whatever the program's umask (0777 left a file of mode 0 that lockscope, run by the
  // same user, could not open).
  if (fd >= 0) fchmod(fd, 0644);
  bool renamed = false;
  if (fd < 0 && (errno == EACCES || errno == EPERM)) {
    // The process gave up the right to create files here (nginx's workers become www-data): its
    // file, kept open since then, is written in place.
    renamed = write_kept_profile(rt, file);
  } else {
    const bool written = fd >= 0 && write_all(fd, file);
    const int write_errno = errno;
    if (fd >= 0) close(fd);
    renamed = written && rename(temporary, path_out) == 0;
    if (!written) errno = write_errno;
    // In a sticky directory (mode 1777) the file kept before giving up root is root's, and may
    // not be replaced by the user the process became: written in place instead.
    if (written && !renamed && (errno == EPERM || errno == EACCES) && rt.kept_profile_fd >= 0) {
      unlink(temporary);
      renamed = write_kept_profile(rt, file);
    }
  }
  rt.file_lock.unlock();
  if (!renamed) {
    RawLine()
        .append("cannot write profile ")
        .append(path_out)
        .append(": ")
        .append(strerror(errno))
        .emit();
    unlink(temporary);
    return false;
  }
  if (rt.log_writes)
    RawLine()
        .append("profile of pid ")
        .append(rt.pid)
        .append(" written in ")
        .append((Clock::monotonic_ns() - began_ns) / 1000)
        .append(" us, ")
        .append(file.size)
        .append(" bytes, begun at ")
        .append(began_ns / 1000)
        .append(" us")
        .emit();
  return true;
}

}  // namespace lockscope::runtime
