// Who owns an exclusive lock (a mutex, a spinlock, an rwlock's write side): for HANDOFFS, the
// acquisitions by a thread other than the lock's previous owner, and for blame, the acquire site
// of the hold a waiter waited behind.
//
// The owner is noted at acquisition, inside the critical section (the mutex re-taken inside a
// condition wait included): the lock itself orders these updates, so the count is exact. (Noted at
// release, outside the critical section, two releases could update the owner in the other order.)
// An owner change is counted at the acquiring site (SiteStats::owner_changes, thread-local); the
// profile writer sums a lock's sites.
//
// Where the owner is kept:
// - A glibc mutex of a kind whose `__count` glibc leaves unused (not recursive, robust, priority
//   inheriting or protecting, nor process-shared): in that field, as an owner token (the thread's
//   tid and the process's fork generation). It is in the lock word's cache line, which the
//   acquirer holds exclusively once its trylock succeeded, so noting the owner moves no second
//   cache line between threads (what the write still costs a contended program:
//   bench/overhead/owner_write_cost.cpp, docs/runtime.md). Nothing else of the program's is
//   written, and glibc reads the field only for the kinds left out. Who held the lock is
//   published for a waiter by the release (or the condition wait) that leaves a thread waiting
//   for it (publish_holder): the slot's holder_site, holder_tid and holder_ticks.
// - Any other lock: in its LockSlot (last_owner and holder_site), written at acquisition when the
//   owner or its site changes.
#pragma once

#include <pthread.h>

#include <cstdint>

#include "runtime/glibc_lock_layout.h"
#include "runtime/lock_table.h"
#include "runtime/owner_token.h"
#include "runtime/runtime_state.h"

namespace lockscope::runtime {

// The owner word of a glibc mutex (its __count), or nullptr when glibc uses that field itself or
// the kind is not known to leave it alone: __kind's low byte is 0 (normal), 2 (error-checking) or
// 3 (adaptive); 1 is recursive, 16 robust, 32 and 64 the priority protocols, 128 process-shared;
// a destroyed mutex reads -1. Read inside the critical section: its line is the acquirer's.
inline uint32_t* mutex_owner_word(pthread_mutex_t* mutex) {
  const int kind =
      __atomic_load_n(&mutex->__data.__kind, __ATOMIC_RELAXED) & glibc::kMutexTypeSharedMask;
  return (kind & ~glibc::kMutexKindMask) == 0 && kind != glibc::kMutexRecursive
             ? &mutex->__data.__count
             : nullptr;
}

// glibc's lock word of a mutex says a thread may be blocked acquiring it (2: a waiter marked it so
// before its futex wait; other kinds' values are no more than a hint here). Read by the holder.
inline bool mutex_word_contended(const pthread_mutex_t* mutex) {
  return __atomic_load_n(&mutex->__data.__lock, __ATOMIC_RELAXED) == glibc::kLockWordContended;
}

// Counts an owner change at the acquiring site `stats`, in its entry (SiteStats::owner_changes).
// The slow part: no entry (counted as dropped), or the entry's count wrapped to 0 (2^32 carried
// into its detail, allocated short if it has none; dropped when there is no memory). Keeps errno.
__attribute__((noinline)) void count_owner_change_slow(ThreadState& self, SiteStats* stats);
__attribute__((always_inline)) inline void count_owner_change(ThreadState& self, SiteStats* stats) {
  // Inside the critical section: the common case is one increment, in line, in the entry's line
  // that the acquisition's count writes too.
  if (__builtin_expect(stats != nullptr && ++stats->owner_changes != 0, 1)) return;
  count_owner_change_slow(self, stats);
}

// An acquisition of a lock whose owner word is `word`, inside its critical section. Returns
// whether the lock changed owner.
__attribute__((always_inline)) inline bool note_owner_in_word(uint32_t* word, ThreadState& self,
                                                              SiteStats* stats) {
  const uint32_t previous = __atomic_load_n(word, __ATOMIC_RELAXED);
  if (__builtin_expect(previous == self.owner_token, 1)) return false;
  __atomic_store_n(word, self.owner_token, __ATOMIC_RELAXED);
  if (word_owner(previous, self.owner_token) == 0) return false;
  count_owner_change(self, stats);
  return true;
}

// The same for a lock whose owner is kept in its slot. Written only when the owner or its site
// changes, so a thread re-taking a lock at one site writes nothing.
void record_owner_change(LockSlot& slot, ThreadState& self, SiteStats* stats, uintptr_t site);
inline bool note_owner_in_slot(LockSlot& slot, ThreadState& self, SiteStats* stats,
                               uintptr_t site) {
  const uint32_t previous = slot.last_owner.load(std::memory_order_relaxed);
  if (__builtin_expect(
          previous != self.tid || holder_site(slot).load(std::memory_order_relaxed) != site, 0))
    record_owner_change(slot, self, stats, site);
  return previous != self.tid && previous != 0;
}

// Either: `word` is the lock's owner word, or nullptr when the slot keeps its owner.
inline bool note_owner(LockSlot& slot, uint32_t* word, ThreadState& self, SiteStats* stats,
                       uintptr_t site) {
  return word ? note_owner_in_word(word, self, stats) : note_owner_in_slot(slot, self, stats, site);
}

// The previous owner (tid, 0: none known) of a lock just acquired, before note_owner.
inline uint32_t previous_owner(const LockSlot& slot, const uint32_t* word,
                               const ThreadState& self) {
  return word ? word_owner(__atomic_load_n(word, __ATOMIC_RELAXED), self.owner_token)
              : slot.last_owner.load(std::memory_order_relaxed);
}

// Before the real unlock (or the condition wait) that leaves a thread waiting for an owner-word
// mutex: the acquire site of this hold (0: not known) for the waiter's blame, with who and when.
inline void publish_holder(LockSlot& slot, const ThreadState& self, uintptr_t acquire_site) {
  holder_site(slot).store(acquire_site, std::memory_order_relaxed);
  holder_tid(slot).store(self.tid, std::memory_order_relaxed);
  holder_ticks(slot).store(g_runtime.clock.now(), std::memory_order_relaxed);
}

// The acquire site of the hold a thread that began to wait at `wait_start` waited behind, read
// once it holds the lock (before note_owner; `previous`: previous_owner()), 0 when not known. An
// owner-word mutex's is trusted when the previous owner published it since the wait began (a
// release that did not see the waiter published nothing, and an older publication names an older
// hold).
inline uintptr_t blamed_holder_site(LockSlot& slot, const uint32_t* word, uint32_t previous,
                                    uint64_t wait_start) {
  if (word == nullptr) return holder_site(slot).load(std::memory_order_relaxed);
  if (previous == 0 || holder_tid(slot).load(std::memory_order_relaxed) != previous ||
      holder_ticks(slot).load(std::memory_order_relaxed) < wait_start)
    return 0;
  return holder_site(slot).load(std::memory_order_relaxed);
}

}  // namespace lockscope::runtime
