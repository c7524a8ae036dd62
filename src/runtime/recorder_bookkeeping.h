// The book-keeping that the acquire and release paths (recorder_acquire.h, recorder_slow_path.h,
// recorder_release.h) share: what a call's outcome is, the sink that stores events, the site
// caches, hold timing and sampling, the waiter counts, lock order and robust mutexes. The hot
// path's contract is at the top of recorder.h.
#pragma once

#include <errno.h>

#include <cstdint>

#include "common/profile_format.h"
#include "common/trace_format.h"
#include "runtime/cancellation.h"
#include "runtime/epoch_word.h"
#include "runtime/errno_guard.h"
#include "runtime/event_sink.h"
#include "runtime/lock_owner.h"
#include "runtime/runtime_state.h"
#include "runtime/stack_budget.h"
#include "runtime/wide_site_cache.h"

namespace lockscope::runtime {

// Who held a reader-writer lock when a waiter's first try failed (glibc's rwlock fields).
enum class Blocker : uint8_t { kUnknown, kReaders, kWriter };

struct AcquireOutcome {
  int result;          // what the real function returned (0 or an error number)
  bool contended;      // the trylock-first failed and we blocked
  uint64_t wait_ns;    // measured when contended (also for timed-out waits)
  uint64_t end_ticks;  // clock after the blocking call, when contended
  Blocker blocker;
  const uintptr_t* stack = nullptr;  // the call stack it waited from (innermost: the call site)
  uint32_t stack_depth = 0;          // 0: not captured
  uint64_t start_ticks = 0;          // clock when the wait began, when contended
  uint32_t* owner_word = nullptr;    // the lock's owner word, when it has one (lock_owner.h)
};

// A wait that holds nothing afterwards (condition, semaphore handled by acquire(), barrier, the
// condvar's mutex re-acquire), from `start_ticks` to `end_ticks`: `waited` when it blocked,
// `failed` on timeout or error. `blame_site`: the acquire site of the hold a wait that `waited`
// was behind (0: none, not known). `begun`: its start was marked already (EventSink::mark).
struct WaitOutcome {
  uint64_t start_ticks;
  uint64_t end_ticks;
  bool waited;
  bool failed;
  bool arrived_last = false;
  bool begun = false;
  uintptr_t blame_site = 0;
  bool cancelled = false;  // the thread was cancelled inside it (failed too: cancellation.h)
};

// A blocking call that failed after waiting: timed out, cancelled inside (cancellation.h), or
// interrupted by a signal handler (a semaphore wait's EINTR). Its time was spent waiting; an
// immediate error's (EDEADLK, EINVAL) was not.
inline bool failed_after_waiting(int result) {
  return result == ETIMEDOUT || result == ECANCELED || result == EINTR;
}

// What a recording found: the lock's slot (nullptr when a table was full) and the operation it was
// counted as (a release: by the side of the rwlock it released).
struct Recorded {
  LockSlot* slot = nullptr;
  format::Operation operation = format::Operation::kLock;
  uint64_t ticks = 0;          // the clock read that timed the hold begun or ended here (0: none)
  bool owner_changed = false;  // an exclusive acquisition from another thread than the last owner
};

// The program's call stack at a contended acquisition, from the call site `site` outwards, into
// `frames` (room for kMaxStackDepth); 0 when the capture budget `spent` is spent (captures took
// 1 % of the thread's time so far, + 1 ms) or the walk did not find `site`. `now`: the clock, read
// by the caller; when a stack was captured it is read again (the wait starts after the capture).
// Built with a frame pointer (as is acquire_slow), so that the frame-pointer walk gets through
// lockscope's own frames. `max_depth` <= kMaxStackDepth frames (capture_wait_stack: the configured
// stack_depth), walked the `unwind_mode` way (UnwindMode). Two budgets: waits, blame and lock
// order spend ThreadState::stack_ticks; timed holds spend hold_stack_ticks, so that a program
// that holds much and waits little keeps the stacks of its waits. `shared` (timed holds, lock
// order; nullptr for the others): a process-wide budget the capture must also fit, and is charged
// to (Runtime::shared_stack_ticks): a server's threads each timing thousands of cold holds would
// otherwise together spend a per-thread budget many times over (memcached: ~3 us per request).
__attribute__((noinline, optimize("no-omit-frame-pointer"))) uint32_t capture_stack_at(
    ThreadState& self, uintptr_t site, uintptr_t* frames, uint32_t max_depth, uint8_t unwind_mode,
    uint64_t& now, uint64_t& spent, std::atomic<uint64_t>* shared = nullptr);
// Whether a capture starting at `now` fits the budgets capture_stack_at checks first: a caller
// that captures often and is mostly refused (a server's every cold hold is timed, and its stack
// wanted) asks here before paying for the call.
inline bool stack_budget_allows(const ThreadState& self, uint64_t now, uint64_t spent,
                                const std::atomic<uint64_t>* shared) {
  const Runtime& rt = g_runtime;
  return StackBudget::allows(spent, now - self.first_ticks, rt.clock.ticks_per_second) &&
         (!shared || StackBudget::allows(shared->load(std::memory_order_relaxed),
                                         now - rt.start_ticks, rt.clock.ticks_per_second));
}
inline uint32_t capture_wait_stack(ThreadState& self, uintptr_t site, uintptr_t* frames,
                                   uint64_t& now) {
  return capture_stack_at(self, site, frames, g_runtime.stack_depth, g_runtime.unwind_mode, now,
                          self.stack_ticks);
}

inline bool acquired(int result) {
  return result == 0 || result == EOWNERDEAD;
}

// How the release of a lock acquired by `op` is counted: an rwlock's by its side.
constexpr format::Operation release_operation_for(format::Operation op) {
  if (format::is_read_side(op)) return format::Operation::kReadUnlock;
  if (format::is_write_side(op)) return format::Operation::kWriteUnlock;
  return format::Operation::kUnlock;
}

struct LocatedSite {
  LockSlot* slot = nullptr;
  uint32_t slot_index = 0;
  SiteStats* stats = nullptr;  // nullptr when a table was full (counted as dropped)
};
// The lock's slot and the thread's stats entry for (lock, op, site); fills the site cache, and
// the wide one when `fill_wide` (in summary mode a release's entry only for a lock released at
// more than one site: the release fast paths find the others from the hold's acquire entry,
// SiteStats::release_stats).
LocatedSite locate_site(ThreadState& self, const void* lock, format::Operation op, uintptr_t site,
                        bool fill_wide = true);

Recorded record_acquire(ThreadState& self, const void* lock, format::Operation op, uintptr_t site,
                        const AcquireOutcome& outcome);
// `default_operation` is used when the thread was not seen to hold `lock` (unbalanced release).
// `made_wait`: hold_made_wait() of the released hold, read before the real unlock; `end_ticks`:
// the clock read there too when the hold is timed (release_end_ticks), else 0.
Recorded record_release(ThreadState& self, const void* lock, uintptr_t site, int result,
                        format::Operation default_operation, bool made_wait, uint64_t end_ticks);
// A signal, broadcast or post; `waiters_seen` < 0 when not known.
Recorded record_event(ThreadState& self, const void* lock, format::Operation op, uintptr_t site,
                      int waiters_seen);
Recorded record_wait(ThreadState& self, const void* lock, format::Operation op, uintptr_t site,
                     const WaitOutcome& wait);
void record_thread_wait(ThreadState& self, format::Primitive primitive, uint64_t wait_ns);
// Blocked on a lock (mutex, rwlock, and the mutex re-acquire after a condition wait). Spinning is
// CPU burned and condition, semaphore and barrier waits are other kinds: kept apart by primitive.
constexpr bool is_lock_wait(format::Primitive primitive) {
  return primitive == format::Primitive::kMutex || primitive == format::Primitive::kRwLock;
}
// The owner word of the lock `calls` acquired (lock_owner.h), nullptr when its slot keeps the
// owner. Read once the lock is held.
template <typename Calls>
__attribute__((always_inline)) inline uint32_t* acquired_owner_word(const Calls& calls) {
  if constexpr (requires { calls.owner_word(); })
    return calls.owner_word();
  else
    return nullptr;
}

inline SiteCacheEntry& site_cache_slot(ThreadState& self, const void* lock, uintptr_t site,
                                       format::Operation op) {
  const uintptr_t key = site_cache_key(lock, site, static_cast<uint16_t>(op));
  static_assert(kSiteCacheSize == 256, "the shift below takes the top 8 bits");
  return self.site_cache[(key * 0x9E3779B97F4A7C15ull) >> 56];
}

// Trace mode fills the site cache too, but its entries carry kTraceCacheTag in their epoch
// (epoch_word.h): the inline fast paths (summary only) never take them, so every event reaches the
// trace sink, whose own lookup (traced_site) does.
inline uint32_t cache_epoch(const ThreadState& self) {
  return self.epoch | (g_runtime.trace.enabled || g_runtime.all_stacks ? kTraceCacheTag : 0u);
}

inline SiteCacheEntry* cached_site_of_epoch(ThreadState& self, const void* lock, uintptr_t site,
                                            format::Operation op, uint32_t epoch) {
  SiteCacheEntry& entry = site_cache_slot(self, lock, site, op);
  return site_cache_entry_is(entry, lock, site, static_cast<uint16_t>(op), epoch) ? &entry
                                                                                  : nullptr;
}
inline SiteCacheEntry* cached_site(ThreadState& self, const void* lock, uintptr_t site,
                                   format::Operation op) {
  return cached_site_of_epoch(self, lock, site, op, self.epoch);
}
inline SiteCacheEntry* traced_site(ThreadState& self, const void* lock, uintptr_t site,
                                   format::Operation op) {
  return cached_site_of_epoch(self, lock, site, op, self.epoch | kTraceCacheTag);
}
// A copy of that entry, taken in a window (open_cache_window: once it closes, the entry may be
// another's), for a release, which goes on to its real unlock and book-keeping with it; false
// when there is none.
inline bool copy_traced_site(ThreadState& self, const void* lock, uintptr_t site,
                             format::Operation op, SiteCacheEntry& copy) {
  open_cache_window(self);
  const SiteCacheEntry* found = traced_site(self, lock, site, op);
  if (found) copy = *found;
  close_cache_window(self);
  return found != nullptr;
}

// Sampled per site (its first N acquisitions, then at random gaps of N on average): a thread
// alternating between locks must not alias onto one of them, nor a site's holds that repeat with
// a period onto one phase of it. Out of line: the clock read is rare and keeps the fast path's
// registers free.
__attribute__((noinline)) void start_sampled_hold(ThreadState& self, HeldLock& held,
                                                  SiteStats& stats);
// Any other hold of a lock a thread once waited for: the clock read at acquisition, in case it
// makes a thread wait (then it is timed exactly, see finish_timed_hold).
inline void stamp_hold(HeldLock& held) {
  held.paused_ticks = 0;
  held.start_ticks = g_runtime.clock.now();
  held.stamped = true;
}
// The end of a timed hold (a sample, an exact one, or one that made a thread wait: `made_wait`)
// whose unlock will wake a waiter, read just before that unlock; else 0 (a hold not timed, or one
// timed after its unlock: finish_timed_hold reads the clock). The unlock of a lock a thread sleeps
// for wakes it, a futex call of microseconds during which the next holder's hold begins: holds
// timed to after it overlapped, and a contended lock's added up to more than the run (4 threads on
// one mutex: 360 ms of holds in 311 ms). Any other unlock is the release's atomic alone, which is
// held time (on a line other cores poll, tens of nanoseconds): read after it. (`Release`: the
// real unlock; a mutex's says whether its lock word marks a sleeping waiter.)
template <typename Release>
inline uint64_t release_end_ticks(const HeldLock& held, bool made_wait,
                                  const Release& real_release) {
  if (made_wait) return g_runtime.clock.now();
  if (held.weight == 0) return 0;
  if constexpr (requires { real_release.contended(); })
    if (real_release.contended()) return g_runtime.clock.now();
  return 0;
}
// At a release at `site`, after the real unlock: a sampled or exact hold is timed, to `end_ticks`
// (release_end_ticks; 0: read now); a stamped hold that made a thread wait (`made_wait`) is timed
// exactly (and taken out of the sample). Its time also goes to the call stack of its release
// (captured within the hold budget, or the one note_blocking_release captured before the unlock),
// for hold time by stack. Returns the hold's end. Built with a frame pointer, as capture_stack_at.
__attribute__((noinline, optimize("no-omit-frame-pointer"))) uint64_t finish_timed_hold(
    ThreadState& self, HeldLock& held, bool made_wait, uintptr_t site, uint64_t end_ticks);
// Counts of threads inside a call (LockSlot::waiters) never go below 0: a lock destroyed and
// re-made while a thread was still on its way out of a call on it must not wrap the count.
inline void leave_waiters(std::atomic<uint32_t>& waiters) {
  uint32_t count = waiters.load(std::memory_order_relaxed);
  while (count != 0 &&
         !waiters.compare_exchange_weak(count, count - 1, std::memory_order_relaxed)) {
  }
}
// Around a contended acquire's blocking call: the lock's slot counts the thread in `waiters` (a
// release that sees it knows its hold made a thread wait) and is marked as waited on. The first
// wait on a lock counts `blocking_holds_untimed`: the hold it waits for began before any clock
// read was due (unless it was a sample or among its site's first N), so it may not be timed.
// `known`: the lock's slot when the caller has it (a cached site's), so that the waiter counts
// itself as soon as it can: a release that runs before it does cannot see it.
__attribute__((noinline)) LockSlot* begin_lock_wait(const void* lock, LockSlot* known = nullptr);
// The lock was waited on (a contended acquire, a condition wait's re-take that waited for the
// mutex): sets LockSlot::waited_on, and on its first time moves Runtime::waited_epoch.
void mark_waited_on(LockSlot& slot);
// A cache entry's stamp_early brought up to date from its lock's slot (Runtime::waited_epoch).
__attribute__((noinline)) void refresh_stamp_early(SiteCacheEntry& cached);
inline void end_lock_wait(LockSlot* slot) {
  if (slot) leave_waiters(slot->waiters);
}
// Whether the hold about to be released made a thread wait: a thread is blocked acquiring the lock
// (read just before the real unlock: after it, the woken thread may already have taken and
// released the lock; one load, of the lock's slot line, which this thread read at acquisition),
// or a condvar waiter was woken while it was held.
// Before the real unlock at `site` of a hold that leaves a thread blocked acquiring the lock: for
// the next contended acquirer, its CPU (releaser_cpu) and its call stack (holder_stack, captured
// within the thread's budget; holder_stacks.h). Out of line: rare, and it may touch errno. Built
// with a frame pointer, as are the release paths that call it, so that the frame-pointer walk
// gets through lockscope's frames to `site`.
__attribute__((noinline, optimize("no-omit-frame-pointer"))) void note_blocking_release(
    ThreadState& self, const HeldLock& held, uintptr_t site);
inline void note_release_with_waiters(ThreadState& self, const HeldLock& held, uintptr_t site) {
  if (held.lock_slot && held.lock_slot->waiters.load(std::memory_order_relaxed) != 0)
    note_blocking_release(self, held, site);
}
inline bool hold_made_wait(const HeldLock& held) {
  return held.made_wait ||
         (held.lock_slot && held.lock_slot->waiters.load(std::memory_order_relaxed) != 0);
}
// With --snapshot-interval: writes a snapshot of the profile when one is due and this thread holds
// nothing. Called after timed releases and from slow paths; returns at once when disabled.
__attribute__((noinline)) void snapshot_if_due(ThreadState& self);
// Before the real unlock of a lock held while signalling a condvar (held.signalled_slot): stamps
// the condvar with the release time. Before, not after: the woken waiter may return from its wait
// as soon as the lock is free, and reads the stamp then.
__attribute__((noinline)) void stamp_release_after_signal(HeldLock& held);

// Book-keeping of an uncontended acquisition at a cached site: thread-local stores, plus the lock's
// owner field, which the lock we now hold serialises for us.
// `kOperation` is the entry's operation (cached_site checked it), known at compile time.
// Returns the new held lock (its epoch is the entry's: the trace sink's entries are tagged).
// `early_ticks`: the clock read before the trylock (SiteCacheEntry::stamp_early), 0 when not read.
inline HeldLock& record_cached_hold(ThreadState& self, SiteCacheEntry& cached,
                                    format::Operation release_op, uint64_t early_ticks = 0) {
  SiteStats& stats = *cached.stats;
  ++stats.count;
  ++self.acquisitions;
  HeldLock& held = self.held[self.held_depth++];
  __builtin_memcpy(static_cast<void*>(&held), &cached, HeldLock::kIdentityBytes);
  held.weight = 0;
  held.signalled_slot = 0;
  held.stamped = false;
  held.made_wait = false;
  held.release_operation = static_cast<uint16_t>(release_op);
  if (__builtin_expect(stats.hold_countdown != 0, 1)) {
    --stats.hold_countdown;
    if (early_ticks != 0) {
      held.paused_ticks = 0;
      held.start_ticks = early_ticks;
      held.stamped = true;
    } else if (__builtin_expect(
                   cached.waited_epoch != g_runtime.waited_epoch.load(std::memory_order_relaxed),
                   0)) {
      // A lock was waited on for the first time since the entry looked: is it this one?
      refresh_stamp_early(cached);
      if (cached.stamp_early) stamp_hold(held);
    }
  } else {
    start_sampled_hold(self, held, stats);
  }
  return held;
}
// Trace mode: a call that did not wait, written unless --min-wait leaves such calls out (then
// counted as filtered). `ticks`: the clock read that timed the hold it began or ended, if any (a
// hold in the trace is then the same number as in the tables), else 0 (read now).
__attribute__((always_inline)) inline void trace_call(ThreadState& self, const void* object,
                                                      uintptr_t site, format::Operation op,
                                                      uint32_t generation, uint8_t flags,
                                                      uint64_t ticks) {
  if (g_runtime.trace.min_wait_ticks != 0) return count_filtered(self.trace);
  append_trace(self.trace, format::TraceKind::kCall, ticks ? ticks : g_runtime.clock.now(), object,
               site, op, generation, flags);
}

// Trace mode, an uncontended acquisition at a site the thread used before (its trace-tagged cache
// entry), after the real call succeeded: the summary's book-keeping, as the inline fast path does
// it, then the event. An acquire operation needs room on the held stack (the caller checked).
// `owner_word`: the lock's (lock_owner.h), or nullptr.
__attribute__((always_inline)) inline void record_traced_acquire(ThreadState& self,
                                                                 SiteCacheEntry& cached,
                                                                 format::Operation op,
                                                                 uint64_t early_ticks,
                                                                 uint32_t* owner_word) {
  uint64_t ticks = 0;
  uint8_t flags = 0;
  if (format::operation_class(op) == format::OperationClass::kAcquire) {
    if (!format::is_read_side(op) &&
        note_owner(*cached.slot, owner_word, self, cached.stats, cached.site))
      flags = format::kTraceOwnerChanged;
    HeldLock& held = record_cached_hold(self, cached, release_operation_for(op), early_ticks);
    held.epoch = own_epoch(self);  // the entry's is tagged; the held stack's must be the thread's
    if (held.stamped) ticks = held.start_ticks;
  } else {
    ++cached.stats->count;  // a semaphore wait: nothing held
  }
  InsideLockscope inside;
  trace_call(self, cached.lock, cached.site, op,
             cached.slot->generation.load(std::memory_order_relaxed), flags, ticks);
}

// The book-keeping of the release of the thread's innermost hold `top` at the site of `stats`,
// after the real unlock succeeded: the hold timed if it is a sample or made a thread wait
// (`made_wait`: hold_made_wait(), and `end_ticks`: release_end_ticks(), both read before the
// unlock), popped and counted. Returns the clock read that timed it, 0 when it was not timed
// (then no snapshot is due either).
__attribute__((always_inline)) inline uint64_t count_release(ThreadState& self, HeldLock& top,
                                                             SiteStats& stats, bool made_wait,
                                                             uintptr_t site, uint64_t end_ticks) {
  const bool timed = top.weight != 0 || made_wait;
  const uint64_t ticks = timed ? finish_timed_hold(self, top, made_wait, site, end_ticks) : 0;
  --self.held_depth;
  ++stats.count;
  ++self.releases;
  return ticks;
}

// Trace mode, the release of the thread's innermost hold `top` at a site used before (`cached`,
// its trace-tagged entry), after the real unlock succeeded: as release_innermost, then the event.
// `made_wait` and `end_ticks`: as count_release's.
__attribute__((always_inline)) inline void record_traced_release(ThreadState& self, HeldLock& top,
                                                                 const SiteCacheEntry& cached,
                                                                 bool made_wait,
                                                                 uint64_t end_ticks) {
  const uint64_t ticks = count_release(self, top, *cached.stats, made_wait, cached.site, end_ticks);
  {
    InsideLockscope inside;
    trace_call(self, cached.lock, cached.site, static_cast<format::Operation>(cached.operation),
               cached.slot->generation.load(std::memory_order_relaxed), 0, ticks);
  }
  if (ticks) snapshot_if_due(self);
}

template <format::Operation kOperation>
inline void record_cached_acquire(ThreadState& self, SiteCacheEntry& cached, uint64_t early_ticks) {
  record_cached_hold(self, cached, release_operation_for(kOperation), early_ticks);
}

// Lock order (lock_order.h): a blocking acquisition of `lock` while the thread holds another
// adds the edge from its innermost held lock, unless known; `slot` may be LockTable::kNoSlot.
// `even_if_held`: the lock is on the held stack but taken again (a condition wait's re-take of its
// mutex under locks taken since); otherwise a lock held already makes no edge.
__attribute__((noinline)) void note_order(ThreadState& self, const void* lock, uint32_t slot,
                                          uintptr_t site, format::Operation op,
                                          bool even_if_held = false);
// The same for a cached site; the held lock's acquire entry then remembers it
// (SiteStats::order_to).
__attribute__((noinline)) void note_order_cached(ThreadState& self, const SiteCacheEntry& cached);
// Whether a blocking acquisition at a cached site may add a lock-order edge: the thread holds a
// lock, and the last lock it took under a hold from that lock's acquire site was another one.
inline bool order_unknown(const ThreadState& self, const SiteCacheEntry& cached) {
  if (self.held_depth == 0) return false;
  const HeldLock& outer = self.held[self.held_depth - 1];
  return outer.epoch != self.epoch || outer.entry->order_to != cached.number;
}
// Acquisitions that can wait, and so close a deadlock: trylocks and semaphore waits do not count.
template <typename Calls>
constexpr bool orders_locks() {
  return Calls::kBlocking &&
         format::operation_class(Calls::kOperation) == format::OperationClass::kAcquire;
}

// A robust mutex seen by lockscope (at its init, or by any slow-path call on it) is flagged in its
// slot and so in the site cache entries filled after that (the first flagging also invalidates
// every site cache, so none filled before stays): the fast path reads the program's mutex before
// its trylock only for those. On a contended mutex a plain read before the atomic costs a second
// transfer of its cache line, and a read of the lock's slot there would wait for that line too.
__attribute__((noinline)) void note_robust(const void* lock);

}  // namespace lockscope::runtime
