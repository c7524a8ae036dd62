// The process's own /proc files, read through /proc/thread-self: /proc/self is the main thread's
// directory, and once main has called pthread_exit (the process lives on in its other threads)
// its exe link and cmdline read as nothing. The report then named no executable and could
// symbolize none of its call sites ("[unknown module]+0x11a2").
#pragma once

#include <fcntl.h>
#include <stddef.h>
#include <unistd.h>

namespace lockscope::runtime {

inline ssize_t read_own_executable_path(char* out, size_t size) {
  const ssize_t length = readlink("/proc/thread-self/exe", out, size);
  return length >= 0 ? length : readlink("/proc/self/exe", out, size);  // Linux before 3.17
}

// A /proc/PID[/task/TID]/stat file of this process read into `buffer`, and where its fields after
// the name begin (its state, then its parent's id...): the name is in parentheses and may hold
// spaces and parentheses, so the last ')' ends it. nullptr when it could not be read (errno
// ENOENT: the thread is gone).
inline const char* read_stat_fields(const char* path, char (&buffer)[512]) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  const ssize_t length = read(fd, buffer, sizeof(buffer) - 1);
  close(fd);
  if (length <= 0) return nullptr;
  buffer[length] = '\0';
  const char* after_name = nullptr;
  for (const char* c = buffer; *c; ++c)
    if (*c == ')') after_name = c;
  return after_name != nullptr && after_name[1] == ' ' ? after_name + 2 : nullptr;
}

inline constexpr const char* kOwnCommandLine = "/proc/thread-self/cmdline";
inline constexpr const char* kOwnCommandLineFallback = "/proc/self/cmdline";

}  // namespace lockscope::runtime
