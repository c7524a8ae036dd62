// The interposed spinlock API. The wait of a contended pthread_spin_lock is time the thread spent
// spinning: CPU burned, not sleep. The report labels it so.
#include <errno.h>
#include <pthread.h>

#include "runtime/interpose.h"
#include "runtime/lock_init.h"
#include "runtime/real_functions.h"
#include "runtime/recorder.h"

using lockscope::format::Operation;
using lockscope::runtime::real;
using lockscope::runtime::resolve_real_functions;

namespace {

// pthread_spinlock_t is a volatile int: its address, without the qualifier, is its identity.
inline const void* identity(pthread_spinlock_t* lock) {
  return const_cast<int*>(lock);
}

auto& functions() {
  return lockscope::runtime::resolved_real();
}

struct SpinLockCalls {
  static constexpr Operation kOperation = Operation::kSpinLock;
  static constexpr bool kBlocking = true;
  pthread_spinlock_t* lock;
  int try_acquire() const { return functions().spin_trylock(lock); }
  int blocking_acquire() const { return functions().spin_lock(lock); }
};

struct SpinTryLockCalls {
  static constexpr Operation kOperation = Operation::kSpinTryLock;
  static constexpr bool kBlocking = false;
  pthread_spinlock_t* lock;
  int try_acquire() const { return functions().spin_trylock(lock); }
  int blocking_acquire() const { return try_acquire(); }
};

struct SpinUnlockCall {
  pthread_spinlock_t* lock;
  int operator()() const { return functions().spin_unlock(lock); }
};

}  // namespace

LOCKSCOPE_EXPORT int pthread_spin_lock(pthread_spinlock_t* lock) {
  return lockscope::runtime::acquire(identity(lock), CALL_SITE, SpinLockCalls{lock});
}

LOCKSCOPE_EXPORT int pthread_spin_trylock(pthread_spinlock_t* lock) {
  return lockscope::runtime::acquire(identity(lock), CALL_SITE, SpinTryLockCalls{lock});
}

LOCKSCOPE_EXPORT int pthread_spin_unlock(pthread_spinlock_t* lock) {
  return lockscope::runtime::release(identity(lock), CALL_SITE, SpinUnlockCall{lock});
}

LOCKSCOPE_EXPORT int pthread_spin_init(pthread_spinlock_t* lock, int shared) {
  const int result = functions().spin_init(lock, shared);
  if (result == 0)
    lockscope::runtime::note_lock_init(
        identity(lock), lockscope::format::Primitive::kSpinLock, 0,
        shared == PTHREAD_PROCESS_SHARED ? uint32_t{lockscope::format::kLockProcessShared} : 0u, 0,
        CALL_SITE);
  return result;
}

LOCKSCOPE_EXPORT int pthread_spin_destroy(pthread_spinlock_t* lock) {
  const int result = functions().spin_destroy(lock);
  if (result == 0) lockscope::runtime::note_lock_destroy(identity(lock));
  return result;
}
