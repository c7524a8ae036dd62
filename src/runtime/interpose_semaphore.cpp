// The interposed semaphore API (unnamed, and named ones from sem_open: both are sem_t*). A wait
// tries sem_trywait first like every blocking acquire; the EAGAIN that try leaves in errno is put
// back, so the program sees exactly what the real sem_wait would have left. Results follow the
// semaphore convention (0, or -1 with errno) while the recorder works with error numbers.
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdarg.h>

#include "runtime/deadline_checks.h"
#include "runtime/errno_guard.h"
#include "runtime/glibc_lock_layout.h"
#include "runtime/interpose.h"
#include "runtime/lock_init.h"
#include "runtime/real_functions.h"
#include "runtime/recorder.h"

using lockscope::format::Operation;
using lockscope::runtime::real;
using lockscope::runtime::resolve_real_functions;

namespace {

auto& functions() {
  return lockscope::runtime::resolved_real();
}

// 0, or the error number the real call left in errno.
inline int error_of(int result) {
  return result == 0 ? 0 : errno;
}

// Threads blocked in sem_wait on `semaphore` — in every process that shares it — as glibc counts
// them itself (glibc >= 2.21 on 64-bit: struct new_sem's `data` holds the value in its low 32 bits
// and the waiters in its high 32). Read, never written; -1 where the layout is not that one.
int waiters_of(const sem_t* semaphore) {
#if defined(__x86_64__) || defined(__aarch64__)
  const uint64_t data =
      __atomic_load_n(reinterpret_cast<const uint64_t*>(semaphore), __ATOMIC_RELAXED);
  return static_cast<int>(data >> lockscope::runtime::glibc::kSemWaitersShift);
#else
  (void)semaphore;
  return -1;
#endif
}

// A first try for a blocking wait: EAGAIN becomes EBUSY ("would block") and errno is restored.
inline int try_before_wait(sem_t* semaphore) {
  const int saved_errno = errno;
  if (functions().sem_trywait(semaphore) == 0) return 0;
  const int error = errno;
  errno = saved_errno;
  return error == EAGAIN ? EBUSY : error;
}

template <Operation Op>
struct SemWaitCalls {
  static constexpr Operation kOperation = Op;
  static constexpr bool kBlocking = Op != Operation::kSemTryWait;
  sem_t* semaphore;
  clockid_t clock;
  const timespec* deadline;
  int try_acquire() const {
    if (Op == Operation::kSemTryWait) return error_of(functions().sem_trywait(semaphore));
    // Refused before any try: the real call that follows gives glibc's EINVAL (deadline_checks.h).
    if (Op == Operation::kSemClockWait && lockscope::runtime::clock_refused(clock)) return EINVAL;
    if (Op != Operation::kSemWait && lockscope::runtime::deadline_refused(deadline)) return EINVAL;
    return try_before_wait(semaphore);
  }
  int blocking_acquire() const {
    auto& f = functions();
    switch (Op) {
      case Operation::kSemWait:
        return error_of(f.sem_wait(semaphore));
      case Operation::kSemTimedWait:
        return error_of(f.sem_timedwait(semaphore, deadline));
      case Operation::kSemClockWait:
        return error_of(f.sem_clockwait(semaphore, clock, deadline));
      default:
        return error_of(f.sem_trywait(semaphore));
    }
  }
};

template <Operation Op>
int wait_on(sem_t* semaphore, uintptr_t site, clockid_t clock = CLOCK_REALTIME,
            const timespec* deadline = nullptr) {
  const int error =
      lockscope::runtime::acquire(semaphore, site, SemWaitCalls<Op>{semaphore, clock, deadline});
  return error == 0 ? 0 : -1;  // errno was left by the real call that failed
}

}  // namespace

LOCKSCOPE_EXPORT int sem_wait(sem_t* semaphore) {
  return wait_on<Operation::kSemWait>(semaphore, CALL_SITE);
}

LOCKSCOPE_EXPORT int sem_trywait(sem_t* semaphore) {
  return wait_on<Operation::kSemTryWait>(semaphore, CALL_SITE);
}

LOCKSCOPE_EXPORT int sem_timedwait(sem_t* semaphore, const timespec* deadline) {
  return wait_on<Operation::kSemTimedWait>(semaphore, CALL_SITE, CLOCK_REALTIME, deadline);
}

LOCKSCOPE_EXPORT int sem_clockwait(sem_t* semaphore, clockid_t clock, const timespec* deadline) {
  return wait_on<Operation::kSemClockWait>(semaphore, CALL_SITE, clock, deadline);
}

LOCKSCOPE_EXPORT int sem_post(sem_t* semaphore) {
  auto* self = lockscope::runtime::current_thread();
  const int waiters = self ? waiters_of(semaphore) : -1;  // before the post wakes one
  const int result = functions().sem_post(semaphore);
  if (self) {
    const lockscope::runtime::ErrnoGuard keep_errno;  // the real post's
    lockscope::runtime::sink().event(*self, semaphore, Operation::kSemPost, CALL_SITE, waiters);
  }
  return result;
}

LOCKSCOPE_EXPORT int sem_init(sem_t* semaphore, int shared, unsigned value) {
  const int result = functions().sem_init(semaphore, shared, value);
  if (result == 0)
    lockscope::runtime::note_lock_init(
        semaphore, lockscope::format::Primitive::kSemaphore, 0,
        shared ? uint32_t{lockscope::format::kLockProcessShared} : 0u, value, CALL_SITE);
  return result;
}

// Named semaphores live in shared memory (/dev/shm): process-shared by nature.
LOCKSCOPE_EXPORT sem_t* sem_open(const char* name, int flags, ...) {
  using SemOpen = sem_t* (*)(const char*, int, ...);
  static SemOpen real_sem_open = reinterpret_cast<SemOpen>(dlsym(RTLD_NEXT, "sem_open"));
  sem_t* semaphore;
  if (flags & O_CREAT) {
    va_list args;
    va_start(args, flags);
    const mode_t mode = va_arg(args, mode_t);
    const unsigned value = va_arg(args, unsigned);
    va_end(args);
    semaphore = real_sem_open(name, flags, mode, value);
  } else {
    semaphore = real_sem_open(name, flags);
  }
  if (semaphore != SEM_FAILED) {
    const lockscope::runtime::ErrnoGuard keep_errno;
    lockscope::runtime::note_lock_flags(semaphore, lockscope::format::Primitive::kSemaphore,
                                        lockscope::format::kLockProcessShared);
  }
  return semaphore;
}

LOCKSCOPE_EXPORT int sem_destroy(sem_t* semaphore) {
  const int result = functions().sem_destroy(semaphore);
  if (result == 0) lockscope::runtime::note_lock_destroy(semaphore);
  return result;
}
