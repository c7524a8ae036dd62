// A thread's recording state: its slot (ThreadState), the locks it holds, its site cache, and the
// windows and marks its fast paths keep.
//
// Below the process's state (runtime_state.h, whose Runtime holds the registry of these slots):
// what reads the process's state (the identity epoch, a pause request) is there, so that the units
// the runtime is built of (the registry, the site and trace tables) can use a thread's slot
// without it.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "common/profile_format.h"
#include "common/runtime_config.h"
#include "runtime/epoch_word.h"  // kPauseEpochBit
#include "runtime/holder_stacks.h"
#include "runtime/inside_lockscope.h"
#include "runtime/lock_table.h"
#include "runtime/site_table.h"
#include "runtime/trace_writer.h"

namespace lockscope::runtime {

inline constexpr uint32_t kMaxHeldLocks = 64;
inline constexpr uint32_t kMaxStackDepth = config::kMaxStackDepth;  // frames per stack

// A lock the thread holds. The first five fields are also a SiteCacheEntry's first five, in the
// same order: an uncontended acquisition at a cached site copies them in one block
// (HeldLock::kIdentityBytes).
struct HeldLock {
  const void* lock;
  LockSlot* lock_slot;
  SiteStats* entry;  // the acquire site's entry
  uint32_t slot;
  uint32_t epoch;  // SiteTable epoch when `entry` was taken; a flush invalidates it
  // The fields below, up to `made_wait`, are all zero for a hold whose release needs nothing but
  // counting (needs_release_work()): the fast acquire writes them with two stores.
  uint32_t weight;  // 0: not in the timed sample; 1: exact (cold site, contended); N: 1 in N
  // Condvar slot + 1 when this thread signalled that condvar while this was its innermost lock:
  // the release then stamps the condvar, so a woken waiter can tell its wait for this mutex
  // (contention) from its wake-up latency (interpose_condvar.cpp). 0 otherwise.
  uint32_t signalled_slot;
  // The clock was read at acquisition: a timed hold, or any hold of a lock a thread once waited
  // for (LockSlot::waited_on), so that it can still be timed if it makes a thread wait.
  bool stamped;
  bool made_wait;  // known before the release to have made a thread wait (a condvar's waiter)
  uint16_t release_operation;  // format::Operation its release is counted as (rwlock: by side)
  uint64_t start_ticks;        // valid when `stamped`
  uint64_t paused_ticks;       // held time before a condition wait released and re-took the lock

  static constexpr size_t kIdentityBytes = 32;  // lock .. epoch
};
static_assert(sizeof(HeldLock) == 64);
static_assert(offsetof(HeldLock, weight) == HeldLock::kIdentityBytes);

// A release has more to do than count (time the hold, stamp a signalled condvar, check whether it
// made a thread wait) exactly when one of these is set.
inline bool needs_release_work(const HeldLock& held) {
  return (held.weight | held.signalled_slot | static_cast<uint32_t>(held.stamped)) != 0;
}

// A direct-mapped cache of the thread's recent (lock, call site, operation) -> stats entry, so that
// the common case (an uncontended acquire or release at a site seen before) needs no table lookup.
// An entry is valid while the thread's table was not flushed (epoch) and no lock changed
// generation anywhere in the process (identity epoch).
struct SiteCacheEntry {
  const void* lock;
  LockSlot* slot;
  SiteStats* stats;
  uint32_t slot_index;
  uint32_t epoch;
  uintptr_t site;
  uint32_t identity_epoch;
  uint16_t operation;
  bool robust;  // the lock is a robust mutex (LockSlot::flags when the entry was filled)
  // The lock was waited on (LockSlot::waited_on, sticky for its generation) when the entry was
  // filled or at an acquisition since: the fast path reads the clock for the hold's stamp before
  // its trylock, so that the read overlaps the lock word's transfer instead of lengthening the
  // critical section.
  bool stamp_early;
  // Runtime::waited_epoch when stamp_early was last brought up to date from the lock's slot.
  uint32_t waited_epoch;
  uint32_t number;  // the stats entry's number in the thread's table (SiteStats::order_to)
};
static_assert(offsetof(SiteCacheEntry, lock) == offsetof(HeldLock, lock) &&
              offsetof(SiteCacheEntry, slot) == offsetof(HeldLock, lock_slot) &&
              offsetof(SiteCacheEntry, stats) == offsetof(HeldLock, entry) &&
              offsetof(SiteCacheEntry, slot_index) == offsetof(HeldLock, slot) &&
              offsetof(SiteCacheEntry, epoch) == offsetof(HeldLock, epoch) &&
              offsetof(SiteCacheEntry, site) == HeldLock::kIdentityBytes);
inline constexpr uint32_t kSiteCacheSize = 256;
// What the site caches hash: locks in an array, a cache line apart, and the few call sites of
// each must spread over a cache, not alias on a few low bits (Fibonacci hashing of this key).
inline uintptr_t site_cache_key(const void* lock, uintptr_t site, uint16_t op) {
  return reinterpret_cast<uintptr_t>(lock) ^ (site << 7) ^ op;
}
struct WideSiteCache;  // a thread's second, larger site cache (wide_site_cache.h)

// What the profile says of a thread besides its lock calls (thread_facts.h reads them). Kept in
// the thread's slot (ThreadState::facts), zeroed when the slot is claimed.
struct ThreadFacts {
  uint64_t end_ticks;  // the clock at its exit destructor; 0: not seen to end
  uint64_t cpu_ns;     // its CLOCK_THREAD_CPUTIME_ID at its exit destructor
  int32_t sched_policy;
  int32_t sched_priority;
  uint32_t known;  // format::kThreadCpuKnown (cpu_ns), format::kThreadSchedKnown (the policy)
};

// The blocking call a thread is inside (a contended acquire, a condition, semaphore or barrier
// wait), so that a profile written meanwhile counts the wait up to then.
struct BlockedCall {
  const void* lock;      // nullptr: not blocked
  const void* released;  // a condition wait's mutex (its hold clock is paused), else nullptr
  uintptr_t site;
  uint64_t since_ticks;
  uint16_t operation;  // format::Operation
};

struct ThreadState {
  // The thread's record (folded into a finished-thread record once the thread is gone).
  uint32_t tid;
  uint32_t flags;        // format::ThreadFlags
  uint32_t owner_token;  // what an owner word names this thread by (lock_owner.h)
  // Site cache windows open (open_cache_window): while one is, no cache entry is filled. (Here, in
  // what was padding: a field after held_depth would move the held stack, and its address
  // arithmetic in the fast paths with it.)
  uint32_t cache_windows;
  pthread_t handle;
  char name[16];
  uint64_t acquisitions;
  uint64_t releases;
  uint64_t contended;
  uint64_t failed;
  uint64_t wait_sum_ns;
  uint64_t wait_max_ns;
  Histogram wait_histogram;  // lock waits (mutex, rwlock, condvar re-acquire)
  uint64_t wait_ns_by_primitive[format::kPrimitiveSlots];  // every wait, by kind
  uint64_t barrier_last_arrivals;
  // Stack capture's budget (capture_stack_at): when the thread was first seen, and the ticks its
  // captures took so far.
  uint64_t first_ticks;
  uint64_t stack_ticks;       // waits, blame, lock order
  uint64_t hold_stack_ticks;  // timed holds
  // Recording state, used only by the thread itself while it runs.
  SiteTable sites;
  // Starts at 1 (a reused slot's again, and its caches are released); +1 in a fork child. While
  // a profile writer pauses the threads it carries kPauseEpochBit, which makes every fast path
  // miss (thread_pause.h): compare held locks' and stacks' epochs with own_epoch().
  uint32_t epoch;
  uint32_t held_depth;
  BlockedCall blocked;
  HeldLock held[kMaxHeldLocks];
  HeldStack held_stacks[kMaxHeldLocks];  // acquisition stacks of contended holds (holder_stacks.h)
  // The stack note_blocking_release captured for the hold being released (start_ticks: that
  // hold's), so that finish_timed_hold, after the unlock, need not capture it again.
  HeldStack released_stack;
  SiteCacheEntry site_cache[kSiteCacheSize];
  HolderStackHint holder_stack_hints[kHolderStackHints];  // see HolderStackTable::intern
  // The slot itself (thread_registry.h).
  std::atomic<uint32_t> state;   // SlotState
  std::atomic<uint32_t> paused;  // 1: at a pause point, for a profile writer (thread_pause.h)
  uint32_t index;
  // The next slot (index + 1, 0: none) on the registry's list of threads that left without the
  // merge lock (ThreadRegistry::mark_exiting_later).
  uint32_t late_exit_next;
  // Entries of its site table the wide cache is sized for (wide_site_cache.h): those of acquire
  // operations, and the release entries of locks released at more than one site. Zeroed with
  // wide_cache (when the slot is claimed) and in a forked child.
  uint32_t wide_entries;
  // Kept across a slot's clear, given back when the slot is claimed; nullptr until needed.
  WideSiteCache* wide_cache;
  // The state of the generator of hold sampling's gaps (start_sampled_hold), 0 until first used.
  uint64_t sample_random;
  // calls_made() when the latest profile write had paused the threads (pause_other_threads; the
  // writer's, under the merge lock): the threads that made calls since went on meanwhile.
  uint64_t calls_when_paused;
  // Trace mode: the thread's file (kept across a slot's clear: closed when the thread is gone).
  TraceBuffer trace;
  // Its end, CPU time and scheduling policy (thread_facts.h; zeroed when the slot is claimed).
  // Last, so that the fields the fast paths use keep their offsets.
  ThreadFacts facts;
};
// The calls a thread has made, by its totals.
inline uint64_t calls_made(const ThreadState& t) {
  return t.acquisitions + t.releases + t.failed;
}

// Whether a site cache entry (inline or wide) holds the key (lock, site, op), valid or not.
inline bool site_cache_entry_keyed(const SiteCacheEntry& entry, const void* lock, uintptr_t site,
                                   uint16_t op) {
  return entry.lock == lock && entry.site == site && entry.operation == op;
}

inline uint32_t own_epoch(const ThreadState& t) {
  return t.epoch & ~kPauseEpochBit;
}
// Where a lock the thread holds was acquired: its entry's site while the entry is the thread's
// current table's, else 0 (not known).
inline uintptr_t held_acquire_site(const ThreadState& t, const HeldLock& held) {
  return held.entry && held.epoch == own_epoch(t) ? held.entry->key.site : 0;
}

// The thread's slot, as tls_thread, but not hidden inside lockscope (InsideLockscope): a fork
// from a signal handler that interrupted lockscope's own code finds the forking thread by it.
extern __thread ThreadState* tls_own_slot;

// A window in which the thread reads a site cache entry outside lockscope and then relies on it
// (the fast paths: an entry looked up before the real call and counted in after it). A signal
// handler that locks may interrupt it; its slow path must then not fill any cache entry, or it
// could fill the one in use: the interrupted acquisition would be counted as the handler's (its
// release then unbalanced), or in an entry another fill moved, a crash (the two-way wide cache
// this was found with moved a slot's entry to its neighbour). So fills (inside lockscope) happen
// only while no window is open (cache_windows_open), and a window closes before its code calls a
// slow path that may fill. Windows nest (a handler's own opens and closes
// one inside the one it interrupted). A handler that leaves by longjmp from inside a window
// leaves it open: its thread then records through the tables alone, exact and slower.
// The signal fences keep the count's change on the window's side of every read of the entry.
inline void open_cache_window(ThreadState& self) {
  ++self.cache_windows;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}
inline void close_cache_window(ThreadState& self) {
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  --self.cache_windows;
}
inline bool cache_windows_open(const ThreadState& self) {
  return self.cache_windows != 0;
}

}  // namespace lockscope::runtime
