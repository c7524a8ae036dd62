// Condition variables. A wait is split in three:
//   * the wait for the condition (operation wait/timedwait/clockwait, on the condvar): from the
//   call
//     to the latest signal or broadcast sent on the condvar during the call (each sender stamps
//     the condvar's slot with the clock just before waking). Without one, or when the wait timed
//     out (ETIMEDOUT: no signal was consumed), the whole call is condition wait;
//   * the mutex contention of glibc's internal re-acquire (cond-reacquire, on the mutex): when the
//     signaller held this mutex as its innermost lock while signalling, from the signal to that
//     lock's release (the release stamps the condvar). Otherwise it was not contended, as far as
//     lockscope can tell;
//   * the wake-up latency (cond-wake, on the condvar): the rest, up to the return.
// A held, timed mutex's hold clock stops for the whole call, so holds never include condition
// waits. Signals and broadcasts count whether lockscope saw a thread waiting on the condvar.
#include <errno.h>
#include <pthread.h>

#include "runtime/errno_guard.h"
#include "runtime/interpose.h"
#include "runtime/lock_init.h"
#include "runtime/real_functions.h"
#include "runtime/recorder.h"

using lockscope::format::Operation;
using lockscope::runtime::HeldLock;
using lockscope::runtime::LockSlot;
using lockscope::runtime::real;
using lockscope::runtime::resolve_real_functions;
using lockscope::runtime::signaller_held_slot;
using lockscope::runtime::signaller_release_ticks;
using lockscope::runtime::ThreadState;

namespace {

auto& functions() {
  return lockscope::runtime::resolved_real();
}

HeldLock* held_entry(ThreadState& self, const void* lock) {
  for (uint32_t i = self.held_depth; i-- > 0;)
    if (self.held[i].lock == lock) return &self.held[i];
  return nullptr;
}

// After the real wait returned `result` (or was cancelled: `cancelled`, the mutex re-taken by
// glibc before its clean-up handlers run), its three parts are recorded, and the mutex's hold goes
// on. `start`: the clock when the wait began; `held`: the mutex's hold, when the thread holds it.
void finish_condition_wait(ThreadState* self, Operation op, pthread_cond_t* condition,
                           pthread_mutex_t* mutex, uintptr_t site, LockSlot* slot, HeldLock* held,
                           uint64_t start, int result, bool cancelled) {
  auto& rt = lockscope::runtime::g_runtime;
  const auto& sink = lockscope::runtime::sink();
  const uint64_t end = rt.clock.now();
  if (held && held->stamped) held->start_ticks = end;
  // A timed-out or cancelled wait consumed no signal: the whole call waited for the condition.
  const bool timed_out = result == ETIMEDOUT || cancelled;
  const bool mutex_held = result == 0 || timed_out;
  const uint32_t mutex_slot =
      held ? held->slot : rt.locks.find_or_insert(reinterpret_cast<uintptr_t>(mutex));
  uint64_t woken = end, released = end;  // the waking signal; the signaller's release of the mutex
  if (slot) {
    lockscope::runtime::leave_waiters(slot->waiters);
    // No more unsignalled waiters than threads still waiting: this one was, or its timeout or
    // cancellation ended it unsignalled (which, of several, is not known).
    const uint64_t inside = slot->waiters.load(std::memory_order_relaxed);
    auto& unsignalled = lockscope::runtime::unsignalled_waiters(*slot);
    uint64_t pending = unsignalled.load(std::memory_order_relaxed);
    while (pending > inside &&
           !unsignalled.compare_exchange_weak(pending, inside, std::memory_order_relaxed)) {
    }
    const uint64_t signalled = slot->last_signal_ticks.load(std::memory_order_acquire);
    if (!timed_out && signalled > start && signalled < end) {
      woken = released = signalled;
      const uint64_t release = signaller_release_ticks(*slot).load(std::memory_order_acquire);
      if (signaller_held_slot(*slot).load(std::memory_order_relaxed) == mutex_slot + 1 &&
          release > signalled && release < end)
        released = release;
    }
  }
  uintptr_t held_before = 0;  // the site of the hold the re-take waited behind, if it waited
  bool owner_changed = false;
  if (mutex_held && mutex_slot == lockscope::runtime::LockTable::kNoSlot) {
    // Unrecorded (the lock table is out of memory), it still takes the mutex over.
    if (uint32_t* word = lockscope::runtime::mutex_owner_word(mutex))
      owner_changed = lockscope::runtime::note_owner_in_word(word, *self, nullptr);
  } else if (mutex_held) {
    // Inside its section. The hold goes on from where the mutex was acquired: that site holds it.
    LockSlot& mutex_lock_slot = rt.locks.slot(mutex_slot);
    uint32_t* word = lockscope::runtime::mutex_owner_word(mutex);
    held_before = lockscope::runtime::blamed_holder_site(
        mutex_lock_slot, word, lockscope::runtime::previous_owner(mutex_lock_slot, word, *self),
        woken);
    // A change of owner is counted at the re-take's own site.
    lockscope::runtime::SiteStats* reacquire =
        lockscope::runtime::locate_site(*self, mutex, Operation::kCondReacquire, site).stats;
    owner_changed = lockscope::runtime::note_owner(
        mutex_lock_slot, word, *self, reacquire,
        held ? lockscope::runtime::held_acquire_site(*self, *held) : 0);
    // Re-taken while holding locks taken since it was first acquired: an order like any other.
    if (held && self->held[self->held_depth - 1].lock != mutex)
      lockscope::runtime::note_order(*self, mutex, mutex_slot, site, Operation::kCondReacquire,
                                     true);
  }
  // In the order of their times (the trace is read in it): the wait for the condition, the mutex's
  // re-acquire, the wake-up latency, the mutex held again.
  sink.wait(*self, condition, op, site,
            {start, woken, true, result != 0, false, true, 0, cancelled});
  if (mutex_held && released != woken && mutex_slot != lockscope::runtime::LockTable::kNoSlot) {
    // Its holds are stamped from now on.
    lockscope::runtime::mark_waited_on(rt.locks.slot(mutex_slot));
  }
  if (mutex_held)
    sink.wait(*self, mutex, Operation::kCondReacquire, site,
              {woken, released, released != woken, false, false, false, held_before});
  if (woken != end)
    sink.wait(*self, condition, Operation::kCondWake, site, {released, end, true, false});
  if (mutex_held)
    sink.mark(*self, lockscope::format::TraceKind::kHoldResume, mutex, op, site, end,
              owner_changed ? lockscope::format::kTraceOwnerChanged : 0);
}

// A condition wait cancelled inside the real call (cancellation.h): recorded as a failed wait up
// to now, its mutex held again (glibc re-takes it before running clean-up handlers, and the
// program's usually unlocks it), the condvar no longer counting the thread as a waiter.
struct CancelledConditionWait {
  ThreadState* self;
  Operation op;
  pthread_cond_t* condition;
  pthread_mutex_t* mutex;
  uintptr_t site;
  LockSlot* slot;
  HeldLock* held;
  uint64_t start;
  void cancelled() {
    const lockscope::runtime::ErrnoGuard keep_errno;
    lockscope::runtime::BlockedScope::end_blocked_call(*self);
    finish_condition_wait(self, op, condition, mutex, site, slot, held, start, ECANCELED, true);
  }
};

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
  if (held && held->stamped) held->paused_ticks += start - held->start_ticks;
  if (slot) {
    slot->waiters.fetch_add(1, std::memory_order_relaxed);
    lockscope::runtime::unsignalled_waiters(*slot).fetch_add(1, std::memory_order_relaxed);
  }
  const auto& sink = lockscope::runtime::sink();
  sink.mark(*self, lockscope::format::TraceKind::kWaitBegin, condition, op, site, start, 0);
  if (held) sink.mark(*self, lockscope::format::TraceKind::kHoldPause, mutex, op, site, start, 0);
  // The wait lets go of the mutex inside glibc: a thread waiting for it is behind this hold.
  if (held && held->lock_slot && lockscope::runtime::mutex_owner_word(mutex) &&
      (held->lock_slot->waiters.load(std::memory_order_relaxed) != 0 ||
       lockscope::runtime::mutex_word_contended(mutex)))
    lockscope::runtime::publish_holder(*held->lock_slot, *self,
                                       lockscope::runtime::held_acquire_site(*self, *held));
  errno = saved_errno;
  int result;
  {
    lockscope::runtime::BlockedScope blocked(*self, condition, op, site, start,
                                             held ? mutex : nullptr);
    CancelledConditionWait cleanup{self, op, condition, mutex, site, slot, held, start};
    result = lockscope::runtime::call_cancellable(real_wait, cleanup);
  }
  {
    const lockscope::runtime::ErrnoGuard keep_result_errno;  // the real wait's
    finish_condition_wait(self, op, condition, mutex, site, slot, held, start, result, false);
  }
  return result;
}

template <typename Send>
int send(Operation op, pthread_cond_t* condition, uintptr_t site, Send real_send) {
  ThreadState* self = lockscope::runtime::current_thread();
  if (self == nullptr) return real_send();
  int woke = -1;  // whether it woke a thread (-1: not known)
  {
    const lockscope::runtime::ErrnoGuard keep_errno;
    const lockscope::runtime::LocatedSite located =
        lockscope::runtime::locate_site(*self, condition, op, site);
    if (LockSlot* slot = located.slot) {
      uint32_t waiters = slot->waiters.load(std::memory_order_relaxed);
      // A signal wakes one of the waiters no earlier signal woke, a broadcast all of them.
      auto& unsignalled = lockscope::runtime::unsignalled_waiters(*slot);
      uint64_t pending = unsignalled.load(std::memory_order_relaxed);
      for (;; waiters = slot->waiters.load(std::memory_order_relaxed)) {
        const uint64_t wakeable = pending < waiters ? pending : waiters;
        woke = wakeable != 0;
        if (wakeable == 0) break;
        const uint64_t left = op == Operation::kCondBroadcast ? 0 : wakeable - 1;
        if (unsignalled.compare_exchange_weak(pending, left, std::memory_order_relaxed)) break;
      }
      // Which lock a woken waiter may still wait for: our innermost, released later (finish_held).
      HeldLock* innermost = self->held_depth ? &self->held[self->held_depth - 1] : nullptr;
      signaller_held_slot(*slot).store(innermost ? innermost->slot + 1 : 0,
                                       std::memory_order_relaxed);
      if (innermost) innermost->signalled_slot = located.slot_index + 1;
      // A woken waiter re-takes the mutex, and waits if this thread still holds it: time this hold
      // exactly when its start was read (the mutex was waited on before).
      if (innermost && waiters > 0 && innermost->stamped) innermost->made_wait = true;
      // The wake-up time of the waiter it woke (its condition wait ends there); one that woke
      // nobody is no waiter's (a broadcast, 50 ms still holding the mutex, a second broadcast: the
      // waiter woke at the first, then waited 50 ms for the mutex, all of it counted as condition
      // wait).
      if (woke > 0)
        slot->last_signal_ticks.store(lockscope::runtime::g_runtime.clock.now(),
                                      std::memory_order_release);
    }
  }
  const int result = real_send();
  const lockscope::runtime::ErrnoGuard keep_result_errno;  // the real send's
  lockscope::runtime::sink().event(*self, condition, op, site, woke);
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
    lockscope::runtime::note_lock_init(
        condition, lockscope::format::Primitive::kCondVar, 0,
        lockscope::runtime::process_shared_flag(attr, pthread_condattr_getpshared), 0, CALL_SITE);
  return result;
}

LOCKSCOPE_EXPORT int pthread_cond_destroy(pthread_cond_t* condition) {
  const int result = functions().cond_destroy(condition);
  if (result == 0) lockscope::runtime::note_lock_destroy(condition);
  return result;
}
