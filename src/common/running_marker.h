// Running markers: how `lockscope record` knows which profiled processes are still to come, without
// becoming anyone's parent or subreaper (a daemon's getppid() stays what it would be without us).
//
// A profiled process keeps an empty file `.<pid>-<start ticks>.running` in the profile directory
// from the moment its runtime starts (or from its fork) until its final profile is written, and
// before that it creates the same marker for each child it still has, so a child forked just before
// its parent ends cannot be missed. `start ticks` is field 22 of /proc/<pid>/stat (clock ticks
// after boot): unlike the pid it tells the process from a later one with a reused pid, and like the
// pid it is kept across exec, so the exec'd image keeps the marker of the image before it. A marker
// whose process is gone (SIGKILL, _exit of a raw clone, a program the runtime cannot enter) is
// stale: the CLI removes it. Readers ignore these names (they do not end in kFileSuffix).
//
// Everything here is allocation-free and async-signal-safe: the runtime uses it in its atfork child
// handler and in fatal-signal handlers.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "common/decimal_text.h"

namespace lockscope::format {

inline constexpr char kRunningMarkerSuffix[] = ".running";

// What /proc/<pid>/stat says about a process: enough to know whether it is still the same one.
struct ProcessStat {
  char state = 0;            // field 3: R, S, D, T, t, Z (zombie), X (dead), ...
  uint32_t ppid = 0;         // field 4
  uint32_t threads = 0;      // field 20
  uint64_t start_ticks = 0;  // field 22
  // A zombie has ended: it only waits for its parent to collect its status. But the state is the
  // main thread's: one that called pthread_exit() shows Z while the other threads go on.
  bool ended() const { return (state == 'Z' || state == 'X' || state == 'x') && threads <= 1; }
};

// Parses the text of /proc/<pid>/stat. The command name (field 2) is in parentheses and may itself
// hold spaces and parentheses: the fields after it are counted from its last ')'.
inline bool parse_process_stat(const char* text, size_t length, ProcessStat& out) {
  const char* end = text + length;
  const char* close = nullptr;
  for (const char* p = text; p < end; ++p)
    if (*p == ')') close = p;
  if (!close || end - close < 4 || close[1] != ' ') return false;
  const char* p = close + 2;
  out.state = *p++;
  for (int field = 4; field <= 22; ++field) {
    if (p >= end || *p != ' ') return false;
    ++p;
    if (field == 4 || field == 20 || field == 22) {
      uint64_t value = 0;
      if (!lockscope::parse_decimal(p, end, value)) return false;
      if (field == 4)
        out.ppid = static_cast<uint32_t>(value);
      else if (field == 20)
        out.threads = static_cast<uint32_t>(value);
      else
        out.start_ticks = value;
    } else {
      if (p < end && *p == '-') ++p;  // a few fields (priority, nice, ...) can be negative
      uint64_t ignored = 0;
      if (!lockscope::parse_decimal(p, end, ignored)) return false;
    }
  }
  return true;
}

// Reads and parses a /proc/.../stat file (plain system calls: errno is left as it was).
inline bool read_process_stat(const char* path, ProcessStat& out) {
  const int saved_errno = errno;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  bool parsed = false;
  if (fd >= 0) {
    char text[1024];  // the command name is at most 15 bytes: the whole line fits
    ssize_t got;
    do {
      got = read(fd, text, sizeof(text));
    } while (got < 0 && errno == EINTR);
    close(fd);
    parsed = got > 0 && parse_process_stat(text, static_cast<size_t>(got), out);
  }
  errno = saved_errno;
  return parsed;
}

// Writes "<directory>/.<pid>-<start ticks>.running" into `out`; false when it does not fit.
inline bool running_marker_path(char* out, size_t size, const char* directory, uint32_t pid,
                                uint64_t start_ticks) {
  size_t at = 0;
  for (const char* p = directory; *p; ++p) {
    if (at + 1 >= size) return false;
    out[at++] = *p;
  }
  for (const char* p = "/."; *p; ++p) {
    if (at + 1 >= size) return false;
    out[at++] = *p;
  }
  if ((at = append_decimal(out, at, size, pid)) >= size - 1) return false;
  out[at++] = '-';
  if ((at = append_decimal(out, at, size, start_ticks)) >= size) return false;
  for (const char* p = kRunningMarkerSuffix; *p; ++p) {
    if (at + 1 >= size) return false;
    out[at++] = *p;
  }
  out[at] = '\0';
  return true;
}

// Reads a marker's file name (no directory) back; false for any other name.
inline bool parse_running_marker_name(const char* name, size_t length, uint32_t& pid,
                                      uint64_t& start_ticks) {
  const char* p = name;
  const char* end = name + length;
  constexpr size_t kSuffixLength = sizeof(kRunningMarkerSuffix) - 1;
  if (length < 4 + kSuffixLength || *p++ != '.') return false;
  uint64_t pid_value = 0;
  if (!lockscope::parse_decimal(p, end, pid_value) || pid_value == 0 || pid_value > UINT32_MAX ||
      p >= end || *p++ != '-')
    return false;
  if (!lockscope::parse_decimal(p, end, start_ticks)) return false;
  if (static_cast<size_t>(end - p) != kSuffixLength) return false;
  for (size_t i = 0; i < kSuffixLength; ++i)
    if (p[i] != kRunningMarkerSuffix[i]) return false;
  pid = static_cast<uint32_t>(pid_value);
  return true;
}

}  // namespace lockscope::format
