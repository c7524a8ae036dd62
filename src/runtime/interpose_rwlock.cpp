// The interposed reader-writer lock API: read and write sides are separate operations (and their
// releases are counted by the side the thread acquired). When a first try fails, glibc's rwlock
// fields (public in <bits/struct_rwlock.h>: __cur_writer, __readers >> 3 readers) tell whether the
// waiter queued behind a writer or behind readers; they are only read, never written.
#include <errno.h>
#include <pthread.h>

#include "runtime/deadline_checks.h"
#include "runtime/glibc_lock_layout.h"
#include "runtime/interpose.h"
#include "runtime/lock_init.h"
#include "runtime/real_functions.h"
#include "runtime/recorder.h"

using lockscope::format::Operation;
using lockscope::runtime::Blocker;
using lockscope::runtime::real;
using lockscope::runtime::resolve_real_functions;

namespace {

Blocker rwlock_blocker(const pthread_rwlock_t* rwlock) {
  if (__atomic_load_n(&rwlock->__data.__cur_writer, __ATOMIC_RELAXED) != 0) return Blocker::kWriter;
  if ((__atomic_load_n(&rwlock->__data.__readers, __ATOMIC_RELAXED) >>
       lockscope::runtime::glibc::kRwlockReaderShift) != 0)
    return Blocker::kReaders;
  return Blocker::kUnknown;
}

auto& functions() {
  return lockscope::runtime::resolved_real();
}

template <Operation Op, bool Blocking>
struct RwLockCalls {
  static constexpr Operation kOperation = Op;
  static constexpr bool kBlocking = Blocking;
  static constexpr bool kRead = lockscope::format::is_read_side(Op);
  pthread_rwlock_t* rwlock;
  clockid_t clock;
  const timespec* deadline;
  int try_acquire() const {
    // Refused before any try: the real call that follows gives glibc's EINVAL (deadline_checks.h).
    if constexpr (Op == Operation::kTimedReadLock || Op == Operation::kTimedWriteLock ||
                  Op == Operation::kClockReadLock || Op == Operation::kClockWriteLock)
      if (deadline != nullptr && (lockscope::runtime::clock_refused(clock) ||
                                  lockscope::runtime::deadline_refused(deadline)))
        return EINVAL;  // glibc checks both only when given a deadline
    return kRead ? functions().rwlock_tryrdlock(rwlock) : functions().rwlock_trywrlock(rwlock);
  }
  int blocking_acquire() const {
    auto& f = functions();
    switch (Op) {
      case Operation::kReadLock:
        return f.rwlock_rdlock(rwlock);
      case Operation::kTimedReadLock:
        return f.rwlock_timedrdlock(rwlock, deadline);
      case Operation::kClockReadLock:
        return f.rwlock_clockrdlock(rwlock, clock, deadline);
      case Operation::kWriteLock:
        return f.rwlock_wrlock(rwlock);
      case Operation::kTimedWriteLock:
        return f.rwlock_timedwrlock(rwlock, deadline);
      case Operation::kClockWriteLock:
        return f.rwlock_clockwrlock(rwlock, clock, deadline);
      default:
        return try_acquire();
    }
  }
  Blocker blocker() const { return rwlock_blocker(rwlock); }
};

template <Operation Op, bool Blocking>
int acquire_rwlock(pthread_rwlock_t* rwlock, uintptr_t site, clockid_t clock = CLOCK_REALTIME,
                   const timespec* deadline = nullptr) {
  return lockscope::runtime::acquire(rwlock, site,
                                     RwLockCalls<Op, Blocking>{rwlock, clock, deadline});
}

struct RwLockUnlockCall {
  pthread_rwlock_t* rwlock;
  int operator()() const { return functions().rwlock_unlock(rwlock); }
};

}  // namespace

LOCKSCOPE_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t* rwlock) {
  return acquire_rwlock<Operation::kReadLock, true>(rwlock, CALL_SITE);
}
LOCKSCOPE_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t* rwlock) {
  return acquire_rwlock<Operation::kTryReadLock, false>(rwlock, CALL_SITE);
}
LOCKSCOPE_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t* rwlock,
                                                const timespec* deadline) {
  return acquire_rwlock<Operation::kTimedReadLock, true>(rwlock, CALL_SITE, CLOCK_REALTIME,
                                                         deadline);
}
LOCKSCOPE_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t* rwlock, clockid_t clock,
                                                const timespec* deadline) {
  return acquire_rwlock<Operation::kClockReadLock, true>(rwlock, CALL_SITE, clock, deadline);
}
LOCKSCOPE_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t* rwlock) {
  return acquire_rwlock<Operation::kWriteLock, true>(rwlock, CALL_SITE);
}
LOCKSCOPE_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t* rwlock) {
  return acquire_rwlock<Operation::kTryWriteLock, false>(rwlock, CALL_SITE);
}
LOCKSCOPE_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t* rwlock,
                                                const timespec* deadline) {
  return acquire_rwlock<Operation::kTimedWriteLock, true>(rwlock, CALL_SITE, CLOCK_REALTIME,
                                                          deadline);
}
LOCKSCOPE_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t* rwlock, clockid_t clock,
                                                const timespec* deadline) {
  return acquire_rwlock<Operation::kClockWriteLock, true>(rwlock, CALL_SITE, clock, deadline);
}

LOCKSCOPE_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t* rwlock) {
  // Side unknown when the thread was not seen to take it: counted as a plain unlock.
  return lockscope::runtime::release(rwlock, CALL_SITE, RwLockUnlockCall{rwlock});
}

LOCKSCOPE_EXPORT int pthread_rwlock_init(pthread_rwlock_t* rwlock,
                                         const pthread_rwlockattr_t* attr) {
  const int result = functions().rwlock_init(rwlock, attr);
  if (result == 0)
    lockscope::runtime::note_lock_init(
        rwlock, lockscope::format::Primitive::kRwLock, 0,
        lockscope::runtime::process_shared_flag(attr, pthread_rwlockattr_getpshared), 0, CALL_SITE);
  return result;
}

LOCKSCOPE_EXPORT int pthread_rwlock_destroy(pthread_rwlock_t* rwlock) {
  const int result = functions().rwlock_destroy(rwlock);
  if (result == 0) lockscope::runtime::note_lock_destroy(rwlock);
  return result;
}
