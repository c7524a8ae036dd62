// The slow path of every acquire (acquire_slow): the uncached or contended call, its blocking and
// timing, table lookups, cancellation and failures. The fast paths that fall into it are in
// recorder_acquire.h.
#pragma once

#include <errno.h>

#include <cstdint>

#include "runtime/recorder_bookkeeping.h"

namespace lockscope::runtime {

// The real calls of one interposed acquire: `Calls` is a small value type (the lock pointer, and a
// deadline for the timed forms) with try_acquire(), blocking_acquire(), and static members
// kOperation and kBlocking (false for a pure trylock); optionally blocker() (who holds it),
// try_is_unsafe() (the first try would change what the program sees: call the real function
// alone), robust() and held_by(tid) (from the mutex's own kind and owner fields). Small enough to
// travel in registers, so the slow path below is a plain tail call and the fast path saves few
// registers.
//
// Everything but the cached, uncontended case: blocking, timing the wait, table lookups, failures.
// `first_result` is the trylock-first result when it was already tried (kNotTried otherwise).
inline constexpr int kNotTried = -1;
inline constexpr int kSkipTry = -2;
// The end of a blocking acquire's wait (outcome.start_ticks: its start): now.
inline void end_contended_wait(AcquireOutcome& outcome, LockSlot* waited) {
  outcome.end_ticks = g_runtime.clock.now();
  end_lock_wait(waited);
  outcome.wait_ns = g_runtime.clock.to_ns(outcome.end_ticks - outcome.start_ticks);
  outcome.contended = true;
}
// Whether a form's trylock-first error other than EBUSY is the call's answer (its
// Calls::kTryErrorsAreFinal; false when it has none).
template <typename Calls>
constexpr bool try_errors_are_final() {
  if constexpr (requires { Calls::kTryErrorsAreFinal; })
    return Calls::kTryErrorsAreFinal;
  else
    return false;
}
// The interposed acquires that POSIX makes cancellation points: the semaphore waits (and the
// condition waits, interpose_condvar.cpp). The others (locks, barriers) are none.
constexpr bool is_cancellation_point(format::Operation op) {
  return op == format::Operation::kSemWait || op == format::Operation::kSemTimedWait ||
         op == format::Operation::kSemClockWait;
}
// A blocking acquire cancelled inside its real call (cancellation.h): the wait is recorded as
// one that failed (ECANCELED) up to now, and the thread is no longer blocked in it.
struct CancelledAcquire {
  ThreadState& self;
  const void* lock;
  uintptr_t site;
  format::Operation op;
  AcquireOutcome& outcome;
  LockSlot* waited;
  void cancelled() {
    const ErrnoGuard keep_errno;
    BlockedScope::end_blocked_call(self);
    outcome.result = ECANCELED;
    end_contended_wait(outcome, waited);
    sink().acquire(self, lock, op, site, outcome);
  }
};

template <typename Calls>
inline int acquire_cached(ThreadState* self, SiteCacheEntry* cached, Calls calls);
template <typename Calls>
inline int acquire_traced(ThreadState* self, SiteCacheEntry* cached, Calls calls);
// `known_slot`: the lock's slot, when a cached site's trylock failed (nullptr: looked up).
template <typename Calls>
__attribute__((noinline, optimize("no-omit-frame-pointer"))) int acquire_slow(
    ThreadState* self, const void* lock, uintptr_t site, int first_result, Calls calls,
    LockSlot* known_slot = nullptr) {
  constexpr bool blocking = Calls::kBlocking;
  if (self == nullptr) self = current_thread_slow();  // the fast path read only the TLS pointer
  if (self) pause_point(*self);
  // A site the inline cache does not hold but the wide one does: the fast path's way from there
  // (before the check below, whose plain read of the mutex would cost a contended one's line a
  // second transfer).
  if (self && first_result == kNotTried && self->held_depth < kMaxHeldLocks) {
    // Trace mode (whose cache entries are tagged, so that the inline fast path never takes them):
    // a site used before goes the fast path's way here, plus its event.
    // Not with --stacks all, whose stack of every acquisition the sink's path captures.
    // The window acquire_cached and acquire_traced close.
    open_cache_window(*self);
    if (g_runtime.trace.enabled) {
      SiteCacheEntry* traced = g_runtime.all_stacks && g_runtime.stack_depth != 0
                                   ? nullptr
                                   : traced_site(*self, lock, site, Calls::kOperation);
      if (traced) return acquire_traced(self, traced, calls);
    } else if (SiteCacheEntry* wide = wide_cached_site(*self, lock, site, Calls::kOperation)) {
      return acquire_cached(self, wide, calls);
    }
    close_cache_window(*self);
  }
  if constexpr (requires { calls.try_is_unsafe(); })
    if (first_result == kNotTried && calls.try_is_unsafe()) first_result = kSkipTry;
  if (self == nullptr) return blocking ? calls.blocking_acquire() : calls.try_acquire();
  if constexpr (orders_locks<Calls>())
    if (first_result == kNotTried && self->held_depth != 0)
      note_order(*self, lock, LockTable::kNoSlot, site, Calls::kOperation);
  if (first_result == kSkipTry) {  // see Calls::try_is_unsafe: the real call alone, untimed
    const AcquireOutcome outcome{calls.blocking_acquire(), false, 0, 0, Blocker::kUnknown};
    const ErrnoGuard keep_errno;  // the real call's
    note_robust(lock);            // only a robust mutex is made not recoverable
    sink().acquire(*self, lock, Calls::kOperation, site, outcome);
    return outcome.result;
  }
  if (first_result == kNotTried) g_runtime.locks.prefetch(reinterpret_cast<uintptr_t>(lock));
  AcquireOutcome outcome{first_result == kNotTried ? calls.try_acquire() : first_result, false, 0,
                         0, Blocker::kUnknown};
  uintptr_t frames[kMaxStackDepth];
  if (blocking && outcome.result == EBUSY) {
    if constexpr (requires { calls.blocker(); }) outcome.blocker = calls.blocker();
    constexpr bool holds =
        format::operation_class(Calls::kOperation) == format::OperationClass::kAcquire;
    // A thread relocking a mutex it holds (EDEADLK from an error-checking one) waits for no one.
    bool own = false;
    if constexpr (requires { calls.held_by(uint32_t{}); }) own = calls.held_by(self->tid);
    LockSlot* waited = holds && !own ? begin_lock_wait(lock, known_slot) : nullptr;
    const Clock& clock = g_runtime.clock;
    uint64_t start = clock.now();
    if (holds && !own && g_runtime.stack_depth != 0) {
      outcome.stack_depth = capture_wait_stack(*self, site, frames, start);
      outcome.stack = frames;
    }
    outcome.start_ticks = start;
    sink().mark(*self, format::TraceKind::kWaitBegin, lock, Calls::kOperation, site, start, 0);
    {
      BlockedScope blocked(*self, lock, Calls::kOperation, site, start);
      if constexpr (is_cancellation_point(Calls::kOperation)) {
        CancelledAcquire cleanup{*self, lock, site, Calls::kOperation, outcome, waited};
        outcome.result = call_cancellable([&] { return calls.blocking_acquire(); }, cleanup);
      } else {
        outcome.result = calls.blocking_acquire();
      }
    }
    end_contended_wait(outcome, waited);
  } else if (blocking && !acquired(outcome.result)) {
    // EINVAL, EAGAIN...: the real blocking function gives its own answer, unless the trylock's is
    // final (Calls::kTryErrorsAreFinal).
    if constexpr (!try_errors_are_final<Calls>()) outcome.result = calls.blocking_acquire();
  }
  if (g_runtime.all_stacks && g_runtime.stack_depth != 0 && outcome.stack_depth == 0 &&
      acquired(outcome.result)) {
    uint64_t now = 0, unbudgeted = 0;  // --stacks all: every one asked for
    outcome.stack_depth = capture_stack_at(*self, site, frames, g_runtime.stack_depth,
                                           g_runtime.unwind_mode, now, unbudgeted);
    outcome.stack = frames;
  }
  const format::Operation op = Calls::kOperation;
  const ErrnoGuard keep_errno;  // the real call's
  // Before record_acquire fills the site cache, which copies the flag (whatever the outcome: a
  // call that failed still fills it). The kind never changes while the mutex lives.
  if constexpr (requires { calls.robust(); })
    if (calls.robust()) note_robust(lock);
  if (acquired(outcome.result)) outcome.owner_word = acquired_owner_word(calls);
  sink().acquire(*self, lock, op, site, outcome);
  return outcome.result;
}

}  // namespace lockscope::runtime
