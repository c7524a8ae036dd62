// The interposed semaphore API (unnamed, and named ones from sem_open: both are sem_t*). A wait
// tries sem_trywait first like every blocking acquire; the EAGAIN that try leaves in errno is put
// back, so the program sees exactly what the real sem_wait would have left. Results follow the
// semaphore convention (0, or -1 with errno) while the recorder works with error numbers.
#include <errno.h>
#include <semaphore.h>

#include "runtime/interpose.h"
#include "runtime/lock_init.h"
#include "runtime/real_functions.h"
#include "runtime/recorder.h"

using lockscope::format::Operation;
using lockscope::runtime::real;
using lockscope::runtime::resolve_real_functions;

namespace {

auto& functions() { return lockscope::runtime::resolved_real(); }

// 0, or the error number the real call left in errno.
inline int error_of(int result) { return result == 0 ? 0 : errno; }

// Threads blocked in a wait on `semaphore`, counted in its slot so that sem_post can tell whether
// it had a waiter to wake. Only the blocking (slow) path pays for this.
class CountedWaiter {
 public:
  explicit CountedWaiter(const sem_t* semaphore) {
    if (semaphore == nullptr) return;
    auto& locks = lockscope::runtime::g_runtime.locks;
    const uint32_t index = locks.find_or_insert(reinterpret_cast<uintptr_t>(semaphore));
    slot_ = index == lockscope::runtime::LockTable::kNoSlot ? nullptr : &locks.slot(index);
    if (slot_) slot_->waiters.fetch_add(1, std::memory_order_relaxed);
  }
  ~CountedWaiter() {
    if (slot_) slot_->waiters.fetch_sub(1, std::memory_order_relaxed);
  }
  CountedWaiter(const CountedWaiter&) = delete;
  CountedWaiter& operator=(const CountedWaiter&) = delete;

 private:
  lockscope::runtime::LockSlot* slot_ = nullptr;
};

int waiters_of(const sem_t* semaphore) {
  auto& locks = lockscope::runtime::g_runtime.locks;
  const uint32_t index = locks.find_or_insert(reinterpret_cast<uintptr_t>(semaphore));
  if (index == lockscope::runtime::LockTable::kNoSlot) return -1;
  return static_cast<int>(locks.slot(index).waiters.load(std::memory_order_relaxed));
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
    return try_before_wait(semaphore);
  }
  int blocking_acquire() const {
    auto& f = functions();
    const CountedWaiter waiter(Op == Operation::kSemTryWait ? nullptr : semaphore);
    switch (Op) {
      case Operation::kSemWait: return error_of(f.sem_wait(semaphore));
      case Operation::kSemTimedWait: return error_of(f.sem_timedwait(semaphore, deadline));
      case Operation::kSemClockWait: return error_of(f.sem_clockwait(semaphore, clock, deadline));
      default: return error_of(f.sem_trywait(semaphore));
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
    const int saved_errno = errno;
    lockscope::runtime::record_event(*self, semaphore, Operation::kSemPost, CALL_SITE, waiters);
    errno = saved_errno;
  }
  return result;
}

LOCKSCOPE_EXPORT int sem_init(sem_t* semaphore, int shared, unsigned value) {
  const int result = functions().sem_init(semaphore, shared, value);
  if (result == 0)
    lockscope::runtime::note_lock_init(
        semaphore, lockscope::format::Primitive::kSemaphore, 0,
        shared ? lockscope::format::kLockProcessShared : 0, value, CALL_SITE);
  return result;
}

LOCKSCOPE_EXPORT int sem_destroy(sem_t* semaphore) {
  const int result = functions().sem_destroy(semaphore);
  if (result == 0) lockscope::runtime::note_lock_destroy(semaphore);
  return result;
}
