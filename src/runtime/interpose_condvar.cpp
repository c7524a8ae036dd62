// Condition variables. A wait is split in two: waiting for the condition, and glibc re-acquiring the
// mutex afterwards — internally, past our interposition. The split point is the latest signal or
// broadcast sent on that condvar after the wait began (each sender stamps the condvar's slot with
// the clock just before waking); without one (timeout, spurious wake-up) the whole wait counts as
// waiting for the condition. The re-acquire is recorded on the mutex (operation cond-reacquire) and
// the mutex's hold clock stops for the whole wait, so holds never include condition waits.
// Signals and broadcasts count whether lockscope saw a thread waiting on the condvar.
#include <errno.h>
#include <pthread.h>

#include "runtime/interpose.h"
#include "runtime/lock_init.h"
#include "runtime/real_functions.h"
#include "runtime/recorder.h"

using lockscope::format::Operation;
using lockscope::runtime::HeldLock;
using lockscope::runtime::LockSlot;
using lockscope::runtime::ThreadState;
using lockscope::runtime::real;
using lockscope::runtime::resolve_real_functions;

namespace {

auto& functions() { return lockscope::runtime::resolved_real(); }

HeldLock* held_entry(ThreadState& self, const void* lock) {
  for (uint32_t i = self.held_depth; i-- > 0;)
    if (self.held[i].lock == lock) return &self.held[i];
  return nullptr;
}

template <typename Wait>
int condition_wait(Operation op, pthread_cond_t* condition, pthread_mutex_t* mutex, uintptr_t site,
                   Wait real_wait) {
  ThreadState* self = lockscope::runtime::current_thread();
  if (self == nullptr) return real_wait();
  auto& rt = lockscope::runtime::g_runtime;
  const int saved_errno = errno;
  LockSlot* slot = lockscope::runtime::locate_site(*self, condition, op, site).slot;
  HeldLock* held = held_entry(*self, mutex);
  const uint64_t start = rt.clock.now();
  if (held && held->weight) held->paused_ticks += start - held->start_ticks;
  if (slot) slot->waiters.fetch_add(1, std::memory_order_relaxed);
  errno = saved_errno;
  const int result = real_wait();
  const uint64_t end = rt.clock.now();
  const int result_errno = errno;
  if (held && held->weight) held->start_ticks = end;
  uint64_t woken = end;
  if (slot) {
    slot->waiters.fetch_sub(1, std::memory_order_relaxed);
    const uint64_t signalled = slot->last_signal_ticks.load(std::memory_order_acquire);
    if (signalled > start && signalled < end) woken = signalled;
  }
  const bool timed_out = result == ETIMEDOUT;
  lockscope::runtime::record_wait(*self, condition, op, site, rt.clock.to_ns(woken - start), true,
                                  result != 0);
  if (result == 0 || timed_out)  // the mutex is held again
    lockscope::runtime::record_wait(*self, mutex, Operation::kCondReacquire, site,
                                    rt.clock.to_ns(end - woken), woken != end, false);
  errno = result_errno;
  return result;
}

template <typename Send>
int send(Operation op, pthread_cond_t* condition, uintptr_t site, Send real_send) {
  ThreadState* self = lockscope::runtime::current_thread();
  if (self == nullptr) return real_send();
  const int saved_errno = errno;
  int waiters = -1;
  if (LockSlot* slot = lockscope::runtime::locate_site(*self, condition, op, site).slot) {
    waiters = static_cast<int>(slot->waiters.load(std::memory_order_relaxed));
    slot->last_signal_ticks.store(lockscope::runtime::g_runtime.clock.now(),
                                  std::memory_order_release);
  }
  errno = saved_errno;
  const int result = real_send();
  const int result_errno = errno;
  lockscope::runtime::record_event(*self, condition, op, site, waiters);
  errno = result_errno;
  return result;
}

}  // namespace

LOCKSCOPE_EXPORT int pthread_cond_wait(pthread_cond_t* condition, pthread_mutex_t* mutex) {
  return condition_wait(Operation::kCondWait, condition, mutex, CALL_SITE,
                        [=] { return functions().cond_wait(condition, mutex); });
}

LOCKSCOPE_EXPORT int pthread_cond_timedwait(pthread_cond_t* condition, pthread_mutex_t* mutex,
                                            const timespec* deadline) {
  return condition_wait(Operation::kCondTimedWait, condition, mutex, CALL_SITE,
                        [=] { return functions().cond_timedwait(condition, mutex, deadline); });
}

LOCKSCOPE_EXPORT int pthread_cond_clockwait(pthread_cond_t* condition, pthread_mutex_t* mutex,
                                            clockid_t clock, const timespec* deadline) {
  return condition_wait(Operation::kCondClockWait, condition, mutex, CALL_SITE, [=] {
    return functions().cond_clockwait(condition, mutex, clock, deadline);
  });
}

LOCKSCOPE_EXPORT int pthread_cond_signal(pthread_cond_t* condition) {
  return send(Operation::kCondSignal, condition, CALL_SITE,
              [=] { return functions().cond_signal(condition); });
}

LOCKSCOPE_EXPORT int pthread_cond_broadcast(pthread_cond_t* condition) {
  return send(Operation::kCondBroadcast, condition, CALL_SITE,
              [=] { return functions().cond_broadcast(condition); });
}

LOCKSCOPE_EXPORT int pthread_cond_init(pthread_cond_t* condition, const pthread_condattr_t* attr) {
  const int result = functions().cond_init(condition, attr);
  if (result == 0)
    lockscope::runtime::note_lock_init(condition, lockscope::format::Primitive::kCondVar, 0,
                                       lockscope::runtime::process_shared_flag(attr, pthread_condattr_getpshared), 0, CALL_SITE);
  return result;
}

LOCKSCOPE_EXPORT int pthread_cond_destroy(pthread_cond_t* condition) {
  const int result = functions().cond_destroy(condition);
  if (result == 0) lockscope::runtime::note_lock_destroy(condition);
  return result;
}
