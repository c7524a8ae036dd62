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
#include "common/trace_format.h"
#include "runtime/cancellation.h"
#include "runtime/epoch_word.h"
#include "runtime/errno_guard.h"
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

// Where the slow paths hand their events: chosen once at start-up (Runtime::sink), the summary
// tables (kSummarySink: the record_* functions below) or the trace writer (kTraceSink, which also
// keeps the tables, so counts stay exact whatever the trace drops). In trace mode the site cache's
// entries are tagged for the trace sink (kTraceCacheTag), which the inline fast paths do not take:
// every event takes a slow path, and the fast paths are summary-only and test nothing per event.
struct EventSink {
  Recorded (*acquire)(ThreadState&, const void* lock, format::Operation, uintptr_t site,
                      const AcquireOutcome&);
  Recorded (*release)(ThreadState&, const void* lock, uintptr_t site, int result,
                      format::Operation default_operation, bool made_wait, uint64_t end_ticks);
  Recorded (*event)(ThreadState&, const void* lock, format::Operation, uintptr_t site,
                    int waiters_seen);
  Recorded (*wait)(ThreadState&, const void* lock, format::Operation, uintptr_t site,
                   const WaitOutcome&);
  // A moment with no figure of its own: a wait begins (kWaitBegin), a condition wait lets go of
  // its mutex and takes it back (kHoldPause, kHoldResume).
  void (*mark)(ThreadState&, format::TraceKind, const void* object, format::Operation,
               uintptr_t site, uint64_t ticks, uint8_t flags);
  // The thread's life: kThreadStart (it registered), kThreadExit, kFork, kExec.
  void (*thread_event)(ThreadState&, format::TraceKind);
};
extern const EventSink kSummarySink;
extern const EventSink kTraceSink;
inline const EventSink& sink() {
  return *g_runtime.sink;
}

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

template <typename Calls>
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

// Whether the thread holds `held`'s lock in another hold than `held` (which may be a copy taken
// off the stack): a re-lock inside an outer hold of it.
inline bool held_further_out(const ThreadState& self, const HeldLock& held) {
  for (uint32_t i = 0; i < self.held_depth && i < kMaxHeldLocks; ++i)
    if (&self.held[i] != &held && self.held[i].lock == held.lock) return true;
  return false;
}

// Takes the thread's hold `i` off its held stack (the holds above it move down) and returns it: a
// release of a lock held under others.
inline HeldLock take_held(ThreadState& self, uint32_t i) {
  const HeldLock held = self.held[i];
  for (uint32_t k = i + 1; k < self.held_depth; ++k) self.held[k - 1] = self.held[k];
  --self.held_depth;
  return held;
}

// The release entry of the hold `held` of `lock` released at `site`, without the slow path's
// lookup: its acquire site's last release entry when that was at `site`, else the site caches';
// nullptr when neither knows it (or the hold's entry is not the thread's current epoch's).
inline SiteStats* known_release_entry(ThreadState& self, const HeldLock& held, const void* lock,
                                      uintptr_t site) {
  SiteStats* stats = held.epoch == own_epoch(self) ? held.entry->release_stats : nullptr;
  if (stats != nullptr && stats->key.site == site) return stats;
  const auto op = static_cast<format::Operation>(held.release_operation);
  open_cache_window(self);
  SiteCacheEntry* cached = cached_site(self, lock, site, op);
  if (cached == nullptr) cached = wide_cached_site(self, lock, site, op);
  stats = cached ? cached->stats : nullptr;
  close_cache_window(self);
  return stats;
}

// The release of a hold not stamped (so not checked for waiters: hold_made_wait) whose lock word
// says a thread is blocked acquiring the lock (Release::contended: a mutex's): the hold is
// published for that waiter (publish_holder). A lock's first waiter is behind such a hold.
template <typename Release>
__attribute__((always_inline)) inline bool unstamped_and_contended(const HeldLock& held,
                                                                   const Release& real_release) {
  if constexpr (requires { real_release.contended(); })
    return !held.stamped && real_release.contended() && real_release.owner_word();
  else
    return false;
}
// Before the real unlock of `held`, a mutex whose owner word keeps its owner: who held it, for a
// thread waiting for it (`made_wait`, unstamped_and_contended, or a condition waiter this hold
// signalled, which re-takes the mutex behind it).
template <typename Release>
__attribute__((always_inline)) inline void publish_if_waited(ThreadState& self,
                                                             const HeldLock& held,
                                                             const Release& real_release,
                                                             bool made_wait) {
  if constexpr (requires { real_release.owner_word(); })
    if (held.lock_slot &&
        (made_wait || held.signalled_slot != 0 || (!held.stamped && real_release.contended())) &&
        real_release.owner_word())
      publish_holder(*held.lock_slot, self, held_acquire_site(self, held));
}

template <typename Release>
__attribute__((noinline, optimize("no-omit-frame-pointer"))) int release_slow(
    ThreadState* self, const void* lock, uintptr_t site, Release real_release,
    format::Operation default_operation) {
  if (self == nullptr) self = current_thread_slow();  // the fast path read only the TLS pointer
  if (self) pause_point(*self);
  bool made_wait = false;
  uint64_t end_ticks = 0;
  uint32_t found = kMaxHeldLocks;  // the hold released, when the thread holds the lock
  if (self)
    for (uint32_t i = self->held_depth; i-- > 0;)
      if (self->held[i].lock == lock) {
        if (self->held[i].signalled_slot) stamp_release_after_signal(self->held[i]);
        made_wait = self->held[i].stamped && hold_made_wait(self->held[i]);
        if (made_wait) note_release_with_waiters(*self, self->held[i], site);
        publish_if_waited(*self, self->held[i], real_release, made_wait);
        end_ticks = release_end_ticks(self->held[i], made_wait, real_release);
        found = i;
        break;
      }
  const int result = real_release();
  if (self == nullptr) return result;
  const ErrnoGuard keep_errno;  // the real release's
  // A hold released out of order (another taken since is still held: memcached lets go of an LRU
  // lock before the item lock it took under it) at a site the caches know: counted as
  // release_innermost counts the innermost, without the slow path's lookup.
  if (result == 0 && found != kMaxHeldLocks && found + 1 < self->held_depth &&
      !g_runtime.trace.enabled && self->held[found].epoch == own_epoch(*self)) {
    if (SiteStats* stats = known_release_entry(*self, self->held[found], lock, site)) {
      HeldLock held = take_held(*self, found);
      const bool timed = held.weight != 0 || made_wait;
      const uint64_t ticks = timed ? finish_timed_hold(*self, held, made_wait, site, end_ticks) : 0;
      ++stats->count;
      ++self->releases;
      if (ticks) snapshot_if_due(*self);
      return result;
    }
  }
  sink().release(*self, lock, site, result, default_operation, made_wait, end_ticks);
  return result;
}

// Any other release of the thread's innermost hold: its release entry comes from the site cache
// when the acquire site's last release was elsewhere, and a hold that needs more than counting (see
// needs_release_work) has a condvar signalled under it stamped and whether it made a thread wait
// read before the real unlock, and is timed after it.
template <typename Release>
__attribute__((noinline, optimize("no-omit-frame-pointer"))) int release_innermost(
    ThreadState* self, const void* lock, uintptr_t site, Release real_release,
    format::Operation default_operation) {
  pause_point(*self);
  HeldLock& top = self->held[self->held_depth - 1];
  // Trace mode: a copy of the site's trace-tagged entry, and the event after the same steps.
  SiteCacheEntry traced_entry;
  const SiteCacheEntry* traced = nullptr;
  SiteStats* stats = nullptr;
  if (g_runtime.trace.enabled) {
    if (top.epoch == own_epoch(*self) &&
        copy_traced_site(*self, lock, site, static_cast<format::Operation>(top.release_operation),
                         traced_entry))
      traced = &traced_entry;
    if (traced == nullptr) return release_slow(self, lock, site, real_release, default_operation);
  } else {
    stats = known_release_entry(*self, top, lock, site);
    if (stats == nullptr) return release_slow(self, lock, site, real_release, default_operation);
  }
  if (top.signalled_slot != 0) stamp_release_after_signal(top);
  // Only a hold whose start was read can be timed: other releases skip the check.
  const bool made_wait = top.stamped && hold_made_wait(top);
  if (made_wait) note_release_with_waiters(*self, top, site);
  publish_if_waited(*self, top, real_release, made_wait);
  const uint64_t end_ticks = release_end_ticks(top, made_wait, real_release);
  const int result = real_release();
  if (__builtin_expect(result != 0, 0)) {
    const ErrnoGuard keep_errno;  // the real release's
    sink().release(*self, lock, site, result, default_operation, made_wait, end_ticks);
    return result;
  }
  if (traced)
    record_traced_release(*self, top, *traced, made_wait, end_ticks);
  else if (count_release(*self, top, *stats, made_wait, site, end_ticks) != 0)
    snapshot_if_due(*self);
  return 0;
}

// What release_innermost would do beyond counting: time a hold (sampled, exact, or stamped and
// made a thread wait), stamp a signalled condvar. A stamped hold of a lock once waited for that
// leaves no thread waiting (the common case on a contended lock) has nothing to do: it is counted
// inline, as a hold never stamped.
inline bool release_has_work(const HeldLock& held) {
  return (held.weight | held.signalled_slot) != 0 || (held.stamped && hold_made_wait(held));
}

// `default_operation` counts a release of a lock this thread was not seen to hold (an rwlock's
// side is otherwise taken from how it was acquired).
//
// The common case: the release of the thread's innermost hold, at the site its acquire site's
// locks were last released at, with nothing to time. It is counted just before the real unlock,
// which is then a tail call: three thread-local increments inside the critical section instead of
// a stack frame around the real call. The real unlock cannot fail there: this thread acquired the
// lock (the held stack says so) and holds it still.
template <typename Release>
__attribute__((always_inline)) inline int release(
    const void* lock, uintptr_t site, Release real_release,
    format::Operation default_operation = format::Operation::kUnlock) {
  ThreadState* self = tls_thread;
  if (__builtin_expect(
          self == nullptr || self->held_depth == 0 || self->held[self->held_depth - 1].lock != lock,
          0))
    return release_slow(self, lock, site, real_release, default_operation);
  const HeldLock& top = self->held[self->held_depth - 1];
  // A held lock's entry is set whenever its epoch is current.
  if (__builtin_expect(top.epoch != self->epoch, 0))
    return release_innermost(self, lock, site, real_release, default_operation);
  SiteStats* stats = top.entry->release_stats;
  if (__builtin_expect(stats == nullptr || stats->key.site != site, 0) ||
      __builtin_expect(release_has_work(top), 0) ||
      __builtin_expect(unstamped_and_contended(top, real_release), 0))
    return release_innermost(self, lock, site, real_release, default_operation);
  --self->held_depth;
  ++stats->count;
  ++self->releases;
  return real_release();
}

}  // namespace lockscope::runtime
