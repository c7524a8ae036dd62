// The hot path, written once for every acquire and release of every primitive.
//
// acquire(): trylock first; on success the acquisition is uncontended and only counted (the hold is
// timed 1 in `hold_sample_period` times per call site); only when it fails do we read the clock,
// call the real blocking function and read the clock again. release(): the real unlock first, then
// the book-keeping (rule 3: do not lengthen the critical section we measure).
//
// The common case — an uncontended acquire or release at a site this thread has used before — is
// inline and touches only thread-local memory plus the lock's owner field: the site's stats entry
// comes from the thread's SiteCacheEntry cache, looked up before the trylock. It calls nothing and
// cannot change errno. Everything else goes to the out-of-line record_acquire/record_release,
// which save and restore errno.
#pragma once

#include <errno.h>

#include <cstdint>

#include "common/profile_format.h"
#include "runtime/runtime_state.h"

namespace lockscope::runtime {

struct AcquireOutcome {
  int result;         // what the real function returned
  bool contended;     // the trylock-first failed and we blocked
  uint64_t wait_ns;   // measured when contended (also for timed-out waits)
  uint64_t end_ticks; // clock after the blocking call, when contended
};

inline bool acquired(int result) { return result == 0 || result == EOWNERDEAD; }

void record_acquire(ThreadState& self, const void* lock, format::Operation op, uintptr_t site,
                    const AcquireOutcome& outcome);
void record_release(ThreadState& self, const void* lock, uintptr_t site, int result);
void record_owner_change(LockSlot& slot, uint32_t tid);

// Owner changes are counted at release, outside the critical section: releases of an exclusive
// lock happen in the same order as its acquisitions, so "released by a different thread than the
// previous release" is "acquired by a different thread than the previous owner". Doing it inside
// the critical section would add a second contended cache line to every handoff.
inline void note_release_owner(LockSlot& slot, uint32_t tid) {
  if (__builtin_expect(slot.last_owner.load(std::memory_order_relaxed) != tid, 0))
    record_owner_change(slot, tid);
}

inline SiteCacheEntry& site_cache_slot(ThreadState& self, const void* lock, uintptr_t site,
                                       format::Operation op) {
  const uintptr_t mixed = (reinterpret_cast<uintptr_t>(lock) >> 4) ^ site ^ static_cast<uintptr_t>(op);
  return self.site_cache[mixed & (kSiteCacheSize - 1)];
}

inline SiteCacheEntry* cached_site(ThreadState& self, const void* lock, uintptr_t site,
                                   format::Operation op) {
  SiteCacheEntry& entry = site_cache_slot(self, lock, site, op);
  if (entry.lock == lock && entry.site == site && entry.operation == static_cast<uint16_t>(op) &&
      entry.epoch == self.epoch &&
      entry.identity_epoch == g_runtime.identity_epoch.load(std::memory_order_relaxed))
    return &entry;
  return nullptr;
}

// Sampled per site (1st, N+1th, ... acquisition): a thread alternating between locks must not alias
// onto one of them. Out of line: the clock read is rare and keeps the fast path's registers free.
__attribute__((noinline)) void start_sampled_hold(HeldLock& held, SiteStats& stats);
__attribute__((noinline)) void finish_timed_hold(HeldLock& held);

// Book-keeping of an uncontended acquisition at a cached site: thread-local stores, plus the lock's
// owner field, which the lock we now hold serialises for us.
inline void record_cached_acquire(ThreadState& self, const SiteCacheEntry& cached) {
  SiteStats& stats = *cached.stats;
  ++stats.count;
  ++self.acquisitions;
  HeldLock& held = self.held[self.held_depth++];
  held.lock = cached.lock;
  held.slot = cached.slot_index;
  held.epoch = self.epoch;
  held.entry = &stats;
  if (__builtin_expect(stats.hold_countdown != 0, 1)) {
    --stats.hold_countdown;
    held.weight = 0;
  } else {
    start_sampled_hold(held, stats);
  }
}

// The real calls of one interposed acquire: `Calls` is a small value type (the lock pointer, and a
// deadline for the timed forms) with try_acquire(), blocking_acquire(), and static members
// kOperation and kBlocking (false for a pure trylock). Small enough to travel in registers, so the
// slow path below is a plain tail call and the fast path saves few registers.
//
// Everything but the cached, uncontended case: blocking, timing the wait, table lookups, failures.
// `first_result` is the trylock-first result when it was already tried (kNotTried otherwise).
inline constexpr int kNotTried = -1;
template <typename Calls>
__attribute__((noinline)) int acquire_slow(ThreadState* self, const void* lock, uintptr_t site,
                                           int first_result, Calls calls) {
  constexpr bool blocking = Calls::kBlocking;
  if (self == nullptr) return blocking ? calls.blocking_acquire() : calls.try_acquire();
  AcquireOutcome outcome{first_result == kNotTried ? calls.try_acquire() : first_result, false, 0,
                         0};
  if (blocking && outcome.result == EBUSY) {
    const Clock& clock = g_runtime.clock;
    const uint64_t start = clock.now();
    outcome.result = calls.blocking_acquire();
    outcome.end_ticks = clock.now();
    outcome.wait_ns = clock.to_ns(outcome.end_ticks - start);
    outcome.contended = true;
  } else if (blocking && !acquired(outcome.result)) {
    // EINVAL, EAGAIN, ENOTRECOVERABLE...: let the real blocking function give its own answer.
    outcome.result = calls.blocking_acquire();
  }
  const format::Operation op = Calls::kOperation;
  const int saved_errno = errno;
  record_acquire(*self, lock, op, site, outcome);
  errno = saved_errno;
  return outcome.result;
}

template <typename Calls>
inline int acquire(const void* lock, uintptr_t site, Calls calls) {
  ThreadState* self = current_thread();
  // The cache is consulted before the lock is taken, so the critical section only sees the stores.
  SiteCacheEntry* cached = self ? cached_site(*self, lock, site, Calls::kOperation) : nullptr;
  if (__builtin_expect(cached == nullptr || self->held_depth >= kMaxHeldLocks, 0))
    return acquire_slow(self, lock, site, kNotTried, calls);
  // The owner field is written at release when another thread held the lock before: request its
  // cache line now, so that its transfer overlaps the lock word's instead of following it.
  __builtin_prefetch(&cached->slot->last_owner, 1);
  const int result = calls.try_acquire();
  if (__builtin_expect(result != 0, 0))
    return acquire_slow(self, cached->lock, cached->site, result, calls);
  record_cached_acquire(*self, *cached);
  return 0;
}

template <typename Release>
__attribute__((noinline)) int release_slow(ThreadState* self, const void* lock, uintptr_t site,
                                           Release real_release) {
  const int result = real_release();
  if (self == nullptr) return result;
  const int saved_errno = errno;
  record_release(*self, lock, site, result);
  errno = saved_errno;
  return result;
}

template <typename Release>
inline int release(const void* lock, uintptr_t site, Release real_release) {
  ThreadState* self = current_thread();
  SiteCacheEntry* cached = self ? cached_site(*self, lock, site, format::Operation::kUnlock) : nullptr;
  if (__builtin_expect(cached == nullptr || self->held_depth == 0 ||
                           self->held[self->held_depth - 1].lock != lock,
                       0))
    return release_slow(self, lock, site, real_release);
  const int result = real_release();
  if (__builtin_expect(result != 0, 0)) {
    const int saved_errno = errno;
    record_release(*self, cached->lock, cached->site, result);
    errno = saved_errno;
    return result;
  }
  HeldLock& top = self->held[self->held_depth - 1];
  if (__builtin_expect(top.weight != 0, 0) && top.epoch == self->epoch) finish_timed_hold(top);
  --self->held_depth;
  ++cached->stats->count;
  ++self->releases;
  note_release_owner(*cached->slot, self->tid);
  return 0;
}

// pthread_cond_wait releases and re-takes the mutex inside glibc, past our interposition: stop
// the hold clock of `lock` for the wait so a hold never includes time spent waiting on a condition.
template <typename Wait>
inline int condition_wait(const void* lock, Wait&& real_wait) {
  ThreadState* self = current_thread();
  HeldLock* held = nullptr;
  if (self) {
    for (uint32_t i = self->held_depth; i-- > 0;)
      if (self->held[i].lock == lock) {
        held = &self->held[i];
        break;
      }
    if (held && held->weight) held->paused_ticks += g_runtime.clock.now() - held->start_ticks;
  }
  const int result = real_wait();
  if (held && held->weight) held->start_ticks = g_runtime.clock.now();
  return result;
}

}  // namespace lockscope::runtime
