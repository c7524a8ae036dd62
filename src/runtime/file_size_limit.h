// RLIMIT_FSIZE (ulimit -f): a write that starts at or past it, or an ftruncate past it, raises
// SIGXFSZ, whose default action ends the program. The runtime's own files never reach it: what
// would is not written (and said so), never the program killed.
#pragma once

#include <sys/resource.h>

#include <cstdint>

namespace lockscope::runtime {

// The limit in bytes (UINT64_MAX: none).
inline uint64_t file_size_limit() {
  struct rlimit limit {};
  if (getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return UINT64_MAX;
  return limit.rlim_cur;
}

}  // namespace lockscope::runtime
