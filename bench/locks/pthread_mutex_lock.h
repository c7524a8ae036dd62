// pthread_mutex_t in its three Linux flavours, as ordinary rows of the lab.
//
// normal: glibc's futex mutex — not fair (a running thread usually beats a woken one), parks
// waiters in
//   the kernel after one failed CAS. The default choice; do not replace it without numbers.
// adaptive (PTHREAD_MUTEX_ADAPTIVE_NP): spins a bounded, self-tuning number of times before
// parking.
//   Helps short critical sections on idle multi-core machines; it only burns CPU when
//   oversubscribed.
// priority-inheritance (PTHREAD_PRIO_INHERIT): every contended operation goes through the kernel
//   (FUTEX_LOCK_PI), so it is slow under contention; use it only where real-time threads share the
//   lock.
#pragma once

#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "bench/locks/lock_concept.h"

namespace lockscope::lab {

enum class PthreadMutexKind { kNormal, kAdaptive, kPriorityInheritance };

template <PthreadMutexKind Kind>
class PthreadMutex {
 public:
  static constexpr std::string_view kName = Kind == PthreadMutexKind::kNormal ? "pthread"
                                            : Kind == PthreadMutexKind::kAdaptive
                                                ? "pthread-adaptive"
                                                : "pthread-pi";

  PthreadMutex() {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    if constexpr (Kind == PthreadMutexKind::kAdaptive) {
      pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
    }
    if constexpr (Kind == PthreadMutexKind::kPriorityInheritance) {
      check(pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT), "setprotocol");
    }
    check(pthread_mutex_init(&mutex_, &attr), "init");
    pthread_mutexattr_destroy(&attr);
  }
  ~PthreadMutex() { pthread_mutex_destroy(&mutex_); }
  PthreadMutex(const PthreadMutex&) = delete;
  PthreadMutex& operator=(const PthreadMutex&) = delete;

  void lock() { check(pthread_mutex_lock(&mutex_), "lock"); }
  void unlock() { check(pthread_mutex_unlock(&mutex_), "unlock"); }
  bool try_lock() { return pthread_mutex_trylock(&mutex_) == 0; }
  pthread_mutex_t* native_handle() { return &mutex_; }

 private:
  // A failing mutex call means the benchmark is meaningless; stop loudly instead of measuring
  // garbage.
  static void check(int rc, const char* what) {
    if (rc != 0) {
      std::fprintf(stderr, "lockscope: bench: pthread_mutex %s (%s) failed: %s\n", what,
                   kName.data(), std::strerror(rc));
      std::abort();
    }
  }

  pthread_mutex_t mutex_;
};

using PthreadNormalMutex = PthreadMutex<PthreadMutexKind::kNormal>;
using PthreadAdaptiveMutex = PthreadMutex<PthreadMutexKind::kAdaptive>;
using PthreadPiMutex = PthreadMutex<PthreadMutexKind::kPriorityInheritance>;

static_assert(Lockable<PthreadNormalMutex>);
static_assert(Lockable<PthreadAdaptiveMutex>);
static_assert(Lockable<PthreadPiMutex>);

}  // namespace lockscope::lab
