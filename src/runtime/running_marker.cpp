#include "runtime/running_marker.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>

#include "common/running_marker.h"
#include "runtime/cancellation.h"
#include "runtime/errno_guard.h"
#include "runtime/runtime_state.h"

namespace lockscope::runtime {
namespace {

// This process's marker, "" while it has none. Rewritten by a fork()ed child for itself.
char g_own_marker[4200];

// `prefix` `id` `leaf`, e.g. "/proc/" 42 "/stat".
void proc_path(char (&out)[96], const char* prefix, uint64_t id, const char* leaf) {
  size_t at = 0;
  for (const char* p = prefix; *p; ++p) out[at++] = *p;
  at = append_decimal(out, at, sizeof(out), id);
  for (const char* p = leaf; *p && at + 1 < sizeof(out); ++p) out[at++] = *p;
  out[at < sizeof(out) ? at : sizeof(out) - 1] = '\0';
}

void create_empty(const char* path) {
  NoCancellation no_cancellation;  // no cancellation point of ours (cancellation.h)
  const int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) close(fd);
}

void create_marker_of_child(uint64_t pid) {
  char path[96];
  proc_path(path, "/proc/", pid, "/stat");
  format::ProcessStat stat;
  if (!format::read_process_stat(path, stat) || stat.ended()) return;
  // Static, not on the stack (this may run on a small alternate signal stack): only the one final
  // write of the process (process_exit.cpp: profile_written) gets here.
  static char marker[sizeof(g_own_marker)];
  if (format::running_marker_path(marker, sizeof(marker), runtime().directory,
                                  static_cast<uint32_t>(pid), stat.start_ticks))
    create_empty(marker);
}

// Every live child of every thread of this process (/proc/self/task/<tid>/children, Linux 3.5+
// with CONFIG_PROC_CHILDREN; without it, nothing is handed over).
void create_markers_of_children() {
  NoCancellation no_cancellation;  // no cancellation point of ours (cancellation.h)
  const int tasks = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (tasks < 0) return;
  alignas(dirent64) char entries[2048];
  for (ssize_t n; (n = getdents64(tasks, entries, sizeof(entries))) > 0;) {
    for (ssize_t at = 0; at < n;) {
      const auto* entry = reinterpret_cast<const dirent64*>(entries + at);
      at += entry->d_reclen;
      uint64_t tid = 0;
      const char* p = entry->d_name;
      for (; *p >= '0' && *p <= '9'; ++p) tid = tid * 10 + static_cast<uint64_t>(*p - '0');
      if (*p || p == entry->d_name) continue;  // "." and ".."
      char path[96];
      proc_path(path, "/proc/self/task/", tid, "/children");
      const int fd = open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      char text[1024];
      uint64_t pid = 0;
      bool in_number = false;
      for (ssize_t got; (got = read(fd, text, sizeof(text))) > 0 || (got < 0 && errno == EINTR);) {
        for (ssize_t i = 0; i < got; ++i) {  // "pid pid pid " (a number may span two reads)
          if (text[i] >= '0' && text[i] <= '9') {
            pid = pid * 10 + static_cast<uint64_t>(text[i] - '0');
            in_number = true;
          } else if (in_number) {
            create_marker_of_child(pid);
            pid = 0;
            in_number = false;
          }
        }
      }
      if (in_number) create_marker_of_child(pid);
      close(fd);
    }
  }
  close(tasks);
}

}  // namespace

void create_running_marker() {
  const ErrnoGuard keep_errno;
  g_own_marker[0] = '\0';
  format::ProcessStat stat;
  if (format::read_process_stat("/proc/self/stat", stat) &&
      format::running_marker_path(g_own_marker, sizeof(g_own_marker), runtime().directory,
                                  runtime().pid, stat.start_ticks))
    create_empty(g_own_marker);
  else
    g_own_marker[0] = '\0';
}

void finish_running_marker() {
  if (!g_own_marker[0]) return;
  const ErrnoGuard keep_errno;
  create_markers_of_children();
  unlink(g_own_marker);
  g_own_marker[0] = '\0';
}

}  // namespace lockscope::runtime
