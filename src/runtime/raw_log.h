// The runtime's only output channel besides the profile: one line to stderr through write(2),
// prefixed "lockscope: ". No stdio (it locks and allocates), no formatting beyond strings and
// unsigned decimals. Only to the stderr the process started with: a program that closed it and
// opened a file of its own, which took descriptor 2, found the runtime's line in its data.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "runtime/cancellation.h"

namespace lockscope::runtime {

// The file descriptor 2 was at start-up (remember_stderr, at the runtime's initialisation).
struct StderrIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  bool open = false;
};
inline StderrIdentity g_stderr_identity;
inline void remember_stderr() {
  struct stat status;
  g_stderr_identity.open = fstat(STDERR_FILENO, &status) == 0;
  g_stderr_identity.device = g_stderr_identity.open ? status.st_dev : 0;
  g_stderr_identity.inode = g_stderr_identity.open ? status.st_ino : 0;
}
// Whether descriptor 2 is still that file (fstat is async-signal-safe).
inline bool stderr_is_the_original() {
  struct stat status;
  return g_stderr_identity.open && fstat(STDERR_FILENO, &status) == 0 &&
         status.st_dev == g_stderr_identity.device && status.st_ino == g_stderr_identity.inode;
}

class RawLine {
 public:
  RawLine() { append("lockscope: "); }
  RawLine& append(const char* text) {
    const size_t n = std::strlen(text);
    const size_t room = sizeof(buffer_) - 1 - length_;
    const size_t take = n < room ? n : room;
    std::memcpy(buffer_ + length_, text, take);
    length_ += take;
    return *this;
  }
  RawLine& append(uint64_t value) {
    char digits[24];
    int i = 0;
    do {
      digits[i++] = static_cast<char>('0' + value % 10);
      value /= 10;
    } while (value && i < 23);
    char reversed[24];
    for (int k = 0; k < i; ++k) reversed[k] = digits[i - 1 - k];
    reversed[i] = '\0';
    return append(reversed);
  }
  void emit() {
    NoCancellation no_cancellation;  // write(2) is a cancellation point; ours are none
    buffer_[length_++] = '\n';
    if (!stderr_is_the_original()) return;
    ssize_t ignored = ::write(STDERR_FILENO, buffer_, length_);
    (void)ignored;
  }

 private:
  char buffer_[512];
  size_t length_ = 0;
};

}  // namespace lockscope::runtime
