// The acquire path of every primitive (acquire()): trylock first, then the cached, uncontended
// book-keeping inline, or the slow path (recorder_slow_path.h).
#pragma once

#include <cstdint>

#include "runtime/acquire_calls.h"
#include "runtime/recorder_slow_path.h"

namespace lockscope::runtime {

// The trylock-first of the fast paths: Calls::try_acquire_fast() where a form has it (a mutex's:
// glibc's trylock inline, inline_trylock.h), else try_acquire().
template <typename Calls>
__attribute__((always_inline)) inline int fast_try(const Calls& calls) {
  if constexpr (requires { calls.try_acquire_fast(); })
    return calls.try_acquire_fast();
  else
    return calls.try_acquire();
}

// The slow path from a site cache entry's window (open_cache_window), closed first: the entry's
// lock, site and slot are read before.
template <typename Calls>
__attribute__((always_inline)) inline int acquire_slow_from(ThreadState* self,
                                                            const SiteCacheEntry* cached,
                                                            int first_result, Calls calls,
                                                            bool pass_slot = true) {
  const void* lock = cached->lock;
  const uintptr_t site = cached->site;
  LockSlot* slot = pass_slot ? cached->slot : nullptr;
  close_cache_window(*self);
  return acquire_slow(self, lock, site, first_result, calls, slot);
}

// An acquisition at a site a cache holds (`cached`: an entry of the inline cache, or of the wide
// one), with room on the held stack: the trylock and inline stores, the slow path only when the
// trylock fails. Shared by the fast path and acquire_slow's wide cache hit. Called inside a
// window (open_cache_window), which it closes.
template <typename Calls>
__attribute__((always_inline)) inline int acquire_cached(ThreadState* self, SiteCacheEntry* cached,
                                                         Calls calls) {
  // Keep the entry's address in a register across the trylock rather than have the compiler
  // recompute it from the hash (which costs it more saved registers).
  asm("" : "+r"(cached));
  if constexpr (requires { calls.try_is_unsafe(); })
    if (__builtin_expect(cached->robust, 0) && calls.try_is_unsafe())
      return acquire_slow_from(self, cached, kSkipTry, calls, false);
  if constexpr (format::operation_class(Calls::kOperation) != format::OperationClass::kAcquire) {
    // A semaphore wait: nothing is held afterwards, so no owner, no held entry, no hold to time.
    const int result = calls.try_acquire();
    if (__builtin_expect(result != 0, 0)) return acquire_slow_from(self, cached, result, calls);
    ++cached->stats->count;
    close_cache_window(*self);
    return 0;
  }
  if constexpr (orders_locks<Calls>())
    if (__builtin_expect(order_unknown(*self, *cached), 0)) note_order_cached(*self, *cached);
  // A lock whose slot keeps its owner has it written there when another thread held the lock
  // before: request the slot's line now, so that its transfer overlaps the lock word's instead of
  // following it. (A mutex's owner word is in its lock word's line.)
  if constexpr (!requires { calls.owner_word(); }) __builtin_prefetch(&cached->slot->last_owner, 1);
  const uint64_t early_ticks = __builtin_expect(cached->stamp_early, 0) ? g_runtime.clock.now() : 0;
  const int result = fast_try(calls);
  if (__builtin_expect(result != 0, 0)) return acquire_slow_from(self, cached, result, calls);
  if constexpr (!format::is_read_side(Calls::kOperation))
    note_owner(*cached->slot, acquired_owner_word(calls), *self, cached->stats, cached->site);
  record_cached_acquire<Calls::kOperation>(*self, *cached, early_ticks);
  close_cache_window(*self);
  return 0;
}

// acquire_cached in trace mode, from acquire_slow: the same steps, and the event; closes the
// window too.
template <typename Calls>
__attribute__((always_inline)) inline int acquire_traced(ThreadState* self, SiteCacheEntry* cached,
                                                         Calls calls) {
  if constexpr (requires { calls.try_is_unsafe(); })
    if (__builtin_expect(cached->robust, 0) && calls.try_is_unsafe())
      return acquire_slow_from(self, cached, kSkipTry, calls, false);
  constexpr bool holds =
      format::operation_class(Calls::kOperation) == format::OperationClass::kAcquire;
  if constexpr (holds && orders_locks<Calls>())
    if (__builtin_expect(order_unknown(*self, *cached), 0)) note_order_cached(*self, *cached);
  const uint64_t early_ticks = holds && cached->stamp_early ? g_runtime.clock.now() : 0;
  const int result = fast_try(calls);
  if (__builtin_expect(result != 0, 0)) return acquire_slow_from(self, cached, result, calls);
  record_traced_acquire(*self, *cached, Calls::kOperation, early_ticks, acquired_owner_word(calls));
  close_cache_window(*self);
  return 0;
}

template <AcquireCalls Calls>
inline int acquire(const void* lock, uintptr_t site, Calls calls) {
  // Only the TLS pointer: a thread without one yet goes to the slow path, which finds (or makes)
  // it. No call here but the trylock, so the fast path keeps a small stack frame.
  ThreadState* self = tls_thread;
  if (__builtin_expect(self == nullptr, 0))
    return acquire_slow(nullptr, lock, site, kNotTried, calls);
  // The cache is consulted before the lock is taken, so the critical section only sees the stores.
  open_cache_window(*self);
  SiteCacheEntry* cached = cached_site(*self, lock, site, Calls::kOperation);
  if (__builtin_expect(cached == nullptr || self->held_depth >= kMaxHeldLocks, 0)) {
    close_cache_window(*self);
    return acquire_slow(self, lock, site, kNotTried, calls);
  }
  return acquire_cached(self, cached, calls);
}

}  // namespace lockscope::runtime
