// The hot path, written once for every acquire and release of every primitive.
//
// acquire(): trylock first; on success the acquisition is uncontended and only counted (the hold is
// timed 1 in `hold_sample_period` times); only when it fails do we read the clock, call the real
// blocking function and read the clock again. Book-keeping happens after the real call returns and
// never touches errno. release(): the real unlock first, then the hold time (rule 3: do not lengthen
// the critical section we measure).
#pragma once

#include <errno.h>

#include <cstdint>

#include "common/profile_format.h"
#include "runtime/runtime_state.h"

namespace lockscope::runtime {

struct AcquireOutcome {
  int result;         // what the real function returned
  bool contended;     // the trylock-first failed and we blocked
  uint64_t wait_ns;   // measured when contended (also for timed-out waits)
  uint64_t end_ticks; // clock after the blocking call, when contended
};

inline bool acquired(int result) { return result == 0 || result == EOWNERDEAD; }

void record_acquire(ThreadState& self, const void* lock, format::Operation op, uintptr_t site,
                    const AcquireOutcome& outcome);
void record_release(ThreadState& self, const void* lock, uintptr_t site, int result);

// pthread_cond_wait releases and re-takes the mutex inside glibc, past our interposition: stop
// the hold clock of `lock` for the wait so a hold never includes time spent waiting on a condition.
template <typename Wait>
inline int condition_wait(const void* lock, Wait&& real_wait) {
  ThreadState* self = current_thread();
  HeldLock* held = nullptr;
  if (self) {
    for (uint32_t i = self->held_depth; i-- > 0;)
      if (self->held[i].lock == lock) {
        held = &self->held[i];
        break;
      }
    if (held && held->weight) held->paused_ticks += runtime().clock.now() - held->start_ticks;
  }
  const int result = real_wait();
  if (held && held->weight) held->start_ticks = runtime().clock.now();
  return result;
}

// `try_acquire()` is the real non-blocking call, `blocking_acquire()` the real blocking one.
// For a pure trylock operation pass the same call for both and `blocking` = false.
template <typename TryAcquire, typename BlockingAcquire>
inline int acquire(const void* lock, format::Operation op, uintptr_t site, bool blocking,
                   TryAcquire&& try_acquire, BlockingAcquire&& blocking_acquire) {
  ThreadState* self = current_thread();
  if (__builtin_expect(self == nullptr, 0)) return blocking ? blocking_acquire() : try_acquire();
  AcquireOutcome outcome{try_acquire(), false, 0, 0};
  if (blocking && outcome.result == EBUSY) {
    const Clock& clock = runtime().clock;
    const uint64_t start = clock.now();
    outcome.result = blocking_acquire();
    outcome.end_ticks = clock.now();
    outcome.wait_ns = clock.to_ns(outcome.end_ticks - start);
    outcome.contended = true;
  } else if (blocking && !acquired(outcome.result)) {
    // EINVAL, EAGAIN, ENOTRECOVERABLE...: let the real blocking function give its own answer.
    outcome.result = blocking_acquire();
  }
  const int saved_errno = errno;
  record_acquire(*self, lock, op, site, outcome);
  errno = saved_errno;
  return outcome.result;
}

template <typename Release>
inline int release(const void* lock, uintptr_t site, Release&& real_release) {
  ThreadState* self = current_thread();
  const int result = real_release();
  if (__builtin_expect(self == nullptr, 0)) return result;
  const int saved_errno = errno;
  record_release(*self, lock, site, result);
  errno = saved_errno;
  return result;
}

}  // namespace lockscope::runtime
