// The runtime's only output channel besides the profile: one line to stderr through write(2),
// prefixed "lockscope: ". No stdio (it locks and allocates), no formatting beyond strings and
// unsigned decimals. Only to the stderr the process started with: a program that closed it and
// opened a file of its own, which took descriptor 2, found the runtime's line in its data. The
// write raises no signal: a stderr that is a pipe nobody reads (SIGPIPE) or a file at the
// program's RLIMIT_FSIZE (SIGXFSZ) killed a program that plain ended with its own status.
#pragma once

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "runtime/cancellation.h"
#include "runtime/file_identity.h"

namespace lockscope::runtime {

// The file descriptor 2 was at start-up (remember_stderr, at the runtime's initialisation).
inline FileIdentity g_stderr_identity;
inline void remember_stderr() {
  g_stderr_identity = FileIdentity::of(STDERR_FILENO);
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
    if (!g_stderr_identity.is(STDERR_FILENO)) return;
    // Blocked while writing; one the write raised is taken off again, one already pending (the
    // program's own, blocked) is left.
    sigset_t quiet, previous, pending_before, pending_after;
    sigemptyset(&quiet);
    sigaddset(&quiet, SIGPIPE);
    sigaddset(&quiet, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &quiet, &previous);
    sigpending(&pending_before);
    ssize_t ignored = ::write(STDERR_FILENO, buffer_, length_);
    (void)ignored;
    sigpending(&pending_after);
    const int raised[] = {SIGPIPE, SIGXFSZ};
    for (int signal : raised) {
      if (!sigismember(&pending_after, signal) || sigismember(&pending_before, signal)) continue;
      sigset_t one;
      sigemptyset(&one);
      sigaddset(&one, signal);
      const timespec now{0, 0};
      sigtimedwait(&one, nullptr, &now);
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  }

 private:
  char buffer_[512];
  size_t length_ = 0;
};

}  // namespace lockscope::runtime
