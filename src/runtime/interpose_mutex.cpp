// The interposed pthread mutex API. Each function is one call into the shared recorder template:
// no per-primitive copy of the trylock-first logic. __builtin_return_address(0) is the call site in
// the program (std::mutex::lock and friends are inline, so that is the user's code too).
#include <errno.h>
#include <pthread.h>

#include "runtime/cancellation.h"
#include "runtime/deadline_checks.h"
#include "runtime/glibc_lock_layout.h"
#include "runtime/inline_trylock.h"
#include "runtime/interpose.h"
#include "runtime/lock_init.h"
#include "runtime/lock_owner.h"
#include "runtime/real_functions.h"
#include "runtime/recorder.h"

using lockscope::format::Operation;
using lockscope::runtime::real;

namespace {

// Before dlsym has found the timed variants (only possible during our own bootstrap), emulate them
// with trylock and short sleeps against the caller's deadline rather than fail.
int poll_until(pthread_mutex_t* mutex, clockid_t clock, const timespec* deadline) {
  lockscope::runtime::NoCancellation no_cancellation;  // nanosleep is a cancellation point
  for (;;) {
    const int result = real().mutex_trylock(mutex);
    if (result != EBUSY) return result;
    timespec now;
    clock_gettime(clock, &now);
    if (now.tv_sec > deadline->tv_sec ||
        (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec))
      return ETIMEDOUT;
    const timespec pause{0, 100000};
    nanosleep(&pause, nullptr);
  }
}

int real_timedlock(pthread_mutex_t* mutex, const timespec* deadline) {
  if (auto* f = real().mutex_timedlock) return f(mutex, deadline);
  return poll_until(mutex, CLOCK_REALTIME, deadline);
}

int real_clocklock(pthread_mutex_t* mutex, clockid_t clock, const timespec* deadline) {
  if (auto* f = real().mutex_clocklock) return f(mutex, clock, deadline);
  return poll_until(mutex, clock, deadline);
}

}  // namespace

// glibc 2.36: pthread_mutex_trylock on a robust mutex made not recoverable returns
// ENOTRECOVERABLE but leaves it locked, so a try-first would turn the program's later calls into
// EBUSY or a hang. Its __owner field says so (PTHREAD_MUTEX_NOTRECOVERABLE); read, never written.
inline bool not_recoverable(const pthread_mutex_t* mutex) {
  return __atomic_load_n(&mutex->__data.__owner, __ATOMIC_RELAXED) ==
         lockscope::runtime::glibc::kMutexNotRecoverable;
}

// glibc's PTHREAD_MUTEX_ROBUST_NORMAL_NP bit of __kind: read after acquiring (see note_robust).
inline bool is_robust(const pthread_mutex_t* mutex) {
  return (__atomic_load_n(&mutex->__data.__kind, __ATOMIC_RELAXED) &
          lockscope::runtime::glibc::kMutexRobust) != 0;
}

// The thread `tid` owns it (glibc's __owner): read after a failed trylock, never written.
inline bool owned_by(const pthread_mutex_t* mutex, uint32_t tid) {
  return static_cast<uint32_t>(__atomic_load_n(&mutex->__data.__owner, __ATOMIC_RELAXED)) == tid;
}

// The fast path's trylock-first: glibc's trylock done inline when it may be (inline_trylock.h),
// else the real one.
inline int try_mutex_fast(pthread_mutex_t* mutex) {
  const int offset = lockscope::runtime::g_runtime.inline_trylock_tid_offset;
  if (offset >= 0) {
    const int result =
        lockscope::runtime::inline_mutex_trylock(mutex, lockscope::runtime::glibc_tid(offset));
    if (result >= 0) return result;
  }
  return real().mutex_trylock(mutex);
}

// The real calls behind each acquire form (see acquire() in recorder_acquire.h). A mutex's blocking
// forms fail as its trylock does for every error but EBUSY (EINVAL, EAGAIN, ENOTRECOVERABLE), so
// the trylock-first's error is the call's answer (kTryErrorsAreFinal): a second call could answer
// otherwise where the first changed state. glibc 2.36 fails a thread's first priority-protect
// operation with EINVAL, then has what it needs: the real lock after it succeeded, and the program
// held a mutex its plain run never had (its next trylock: EDEADLK instead of 0).
struct MutexLockCalls {
  static constexpr bool kTryErrorsAreFinal = true;
  uint32_t* owner_word() const { return lockscope::runtime::mutex_owner_word(mutex); }
  bool try_is_unsafe() const { return not_recoverable(mutex); }
  bool robust() const { return is_robust(mutex); }
  bool held_by(uint32_t tid) const { return owned_by(mutex, tid); }
  static constexpr Operation kOperation = Operation::kLock;
  static constexpr bool kBlocking = true;
  pthread_mutex_t* mutex;
  int try_acquire() const { return real().mutex_trylock(mutex); }
  int try_acquire_fast() const { return try_mutex_fast(mutex); }
  int blocking_acquire() const { return real().mutex_lock(mutex); }
};

struct MutexTryLockCalls {
  uint32_t* owner_word() const { return lockscope::runtime::mutex_owner_word(mutex); }
  static constexpr Operation kOperation = Operation::kTryLock;
  static constexpr bool kBlocking = false;
  pthread_mutex_t* mutex;
  int try_acquire() const { return real().mutex_trylock(mutex); }
  int try_acquire_fast() const { return try_mutex_fast(mutex); }
  int blocking_acquire() const { return try_acquire(); }
};

struct MutexTimedLockCalls {
  static constexpr bool kTryErrorsAreFinal = true;
  uint32_t* owner_word() const { return lockscope::runtime::mutex_owner_word(mutex); }
  bool try_is_unsafe() const { return not_recoverable(mutex); }
  bool robust() const { return is_robust(mutex); }
  bool held_by(uint32_t tid) const { return owned_by(mutex, tid); }
  static constexpr Operation kOperation = Operation::kTimedLock;
  static constexpr bool kBlocking = true;
  pthread_mutex_t* mutex;
  const timespec* deadline;
  int try_acquire() const { return real().mutex_trylock(mutex); }
  int try_acquire_fast() const { return try_mutex_fast(mutex); }
  int blocking_acquire() const { return real_timedlock(mutex, deadline); }
};

struct MutexClockLockCalls {
  static constexpr bool kTryErrorsAreFinal = true;
  uint32_t* owner_word() const { return lockscope::runtime::mutex_owner_word(mutex); }
  bool try_is_unsafe() const { return not_recoverable(mutex); }
  bool robust() const { return is_robust(mutex); }
  bool held_by(uint32_t tid) const { return owned_by(mutex, tid); }
  static constexpr Operation kOperation = Operation::kClockLock;
  static constexpr bool kBlocking = true;
  pthread_mutex_t* mutex;
  const timespec* deadline;
  clockid_t clock;
  int try_acquire() const {
    if (lockscope::runtime::clock_refused(clock)) return EINVAL;  // final, as glibc's
    return real().mutex_trylock(mutex);
  }
  int try_acquire_fast() const {
    if (lockscope::runtime::clock_refused(clock)) return EINVAL;
    return try_mutex_fast(mutex);
  }
  int blocking_acquire() const { return real_clocklock(mutex, clock, deadline); }
};

LOCKSCOPE_EXPORT int pthread_mutex_lock(pthread_mutex_t* mutex) {
  return lockscope::runtime::acquire(mutex, CALL_SITE, MutexLockCalls{mutex});
}

LOCKSCOPE_EXPORT int pthread_mutex_trylock(pthread_mutex_t* mutex) {
  return lockscope::runtime::acquire(mutex, CALL_SITE, MutexTryLockCalls{mutex});
}

LOCKSCOPE_EXPORT int pthread_mutex_timedlock(pthread_mutex_t* mutex, const timespec* deadline) {
  return lockscope::runtime::acquire(mutex, CALL_SITE, MutexTimedLockCalls{mutex, deadline});
}

LOCKSCOPE_EXPORT int pthread_mutex_clocklock(pthread_mutex_t* mutex, clockid_t clock,
                                             const timespec* deadline) {
  return lockscope::runtime::acquire(mutex, CALL_SITE, MutexClockLockCalls{mutex, deadline, clock});
}

struct MutexUnlockCall {
  pthread_mutex_t* mutex;
  int operator()() const { return real().mutex_unlock(mutex); }
  uint32_t* owner_word() const { return lockscope::runtime::mutex_owner_word(mutex); }
  bool contended() const { return lockscope::runtime::mutex_word_contended(mutex); }
};

LOCKSCOPE_EXPORT int pthread_mutex_unlock(pthread_mutex_t* mutex) {
  return lockscope::runtime::release(mutex, CALL_SITE, MutexUnlockCall{mutex});
}

LOCKSCOPE_EXPORT int pthread_mutex_init(pthread_mutex_t* mutex, const pthread_mutexattr_t* attr) {
  const int result = real().mutex_init(mutex, attr);
  if (result == 0) lockscope::runtime::note_mutex_init(mutex, attr, CALL_SITE);
  return result;
}

LOCKSCOPE_EXPORT int pthread_mutex_destroy(pthread_mutex_t* mutex) {
  const int result = real().mutex_destroy(mutex);
  if (result == 0) lockscope::runtime::note_lock_destroy(mutex);
  return result;
}
