// What glibc refuses with EINVAL before it tries a timed or clock wait's lock: a clock other than
// CLOCK_REALTIME and CLOCK_MONOTONIC (futex_abstimed_supported_clockid), and for rwlocks and
// semaphores a deadline whose tv_nsec is outside [0, 1e9). The runtime's trylock-first runs before
// the real call: without these checks it took a free lock and answered 0 where the program gets
// EINVAL and no lock.
#pragma once

#include <time.h>

namespace lockscope::runtime {

inline bool clock_refused(clockid_t clock) {
  return clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC;
}

// A null deadline is an rwlock's "no timeout" (glibc checks only a given one); sem_timedwait
// reads it unconditionally, in the real call that follows.
inline bool deadline_refused(const timespec* deadline) {
  return deadline != nullptr && (deadline->tv_nsec < 0 || deadline->tv_nsec >= 1000000000);
}

}  // namespace lockscope::runtime
