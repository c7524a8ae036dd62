// Opening the runtime's files when the program has used up its descriptors (EMFILE): a program
// that opened files until the limit and then returned lost its profile ("cannot write profile
// ...: Too many open files"). The soft RLIMIT_NOFILE is raised by one for that open, when the
// hard limit allows, and put back at once: the descriptor above the limit stays open, and the
// program's own calls meet its limit again (except one that ran in those microseconds on another
// thread). With the soft limit at the hard one, the open fails as before.
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "runtime/errno_guard.h"

namespace lockscope::runtime {

inline int open_at_descriptor_limit(const char* path, int flags, mode_t mode = 0) {
  int fd = open(path, flags, mode);
  if (fd >= 0 || errno != EMFILE) return fd;
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
      limit.rlim_cur >= limit.rlim_max) {
    errno = EMFILE;
    return -1;
  }
  const struct rlimit raised = {limit.rlim_cur + 1, limit.rlim_max};
  if (setrlimit(RLIMIT_NOFILE, &raised) != 0) {
    errno = EMFILE;
    return -1;
  }
  fd = open(path, flags, mode);
  const ErrnoGuard keep_open_errno;  // the open's, whatever setrlimit leaves
  setrlimit(RLIMIT_NOFILE, &limit);
  return fd;
}

}  // namespace lockscope::runtime
