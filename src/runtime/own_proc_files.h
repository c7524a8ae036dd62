// The process's own /proc files, read through /proc/thread-self: /proc/self is the main thread's
// directory, and once main has called pthread_exit (the process lives on in its other threads)
// its exe link and cmdline read as nothing. The report then named no executable and could
// symbolize none of its call sites ("[unknown module]+0x11a2").
#pragma once

#include <stddef.h>
#include <unistd.h>

namespace lockscope::runtime {

inline ssize_t read_own_executable_path(char* out, size_t size) {
  const ssize_t length = readlink("/proc/thread-self/exe", out, size);
  return length >= 0 ? length : readlink("/proc/self/exe", out, size);  // Linux before 3.17
}

inline constexpr const char* kOwnCommandLine = "/proc/thread-self/cmdline";
inline constexpr const char* kOwnCommandLineFallback = "/proc/self/cmdline";

}  // namespace lockscope::runtime
