// The runtime's process-wide state and the per-thread recording state.
//
// Lifecycle: the first interposed call (which may come before our constructor) or the constructor
// initialises the runtime: config from LOCKSCOPE_CONFIG, clock, tables. Each thread claims a
// ThreadState slot on its first call (thread_registry.h: it records into it until the kernel says
// the thread is gone, late exit-time calls included; then its numbers are folded into the process
// table and the slot is reused). fork() children reset to an empty profile of their own; exec and
// exit write the profile (profile_writer.h).
//
// Signal safety: the internal spinlock is only ever taken by code marked inside lockscope
// (InsideLockscope), so a signal handler that interrupts it and locks passes through (counted as a
// reentrant call) instead of spinning on a lock its own thread holds.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "common/profile_format.h"
#include "common/runtime_config.h"
#include "runtime/clock.h"
#include "runtime/event_sink.h"
#include "runtime/file_identity.h"
#include "runtime/holder_stacks.h"
#include "runtime/internal_lock.h"
#include "runtime/lock_order.h"
#include "runtime/lock_table.h"
#include "runtime/site_table.h"
#include "runtime/thread_facts.h"
#include "runtime/thread_pause.h"
#include "runtime/thread_registry.h"
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

enum class RuntimeStatus : int { kUninitialized = 0, kInitializing = 1, kReady = 2, kFailed = 3 };

struct Runtime {
  // +1 whenever a lock changes generation: invalidates every thread's SiteCacheEntry. Alone on its
  // cache line: read on every cached acquire, written only by init/destroy.
  alignas(64) std::atomic<uint32_t> identity_epoch{0};
  // The number of the pause a profile writer asks for while it has the other threads stop at
  // their next pause point, 0 when none (thread_pause.h): read at every slow path's entry, so it
  // shares the line read on every cached acquire.
  std::atomic<uint32_t> pause_requested{0};
  // +1 whenever a lock is waited on for the first time in its generation (LockSlot::waited_on):
  // a cached acquisition whose entry saw another value looks at its lock's slot again, so that
  // the fast path need not read a never-contended lock's slot at every acquisition. Read on every
  // cached acquire of such a lock: on the same line.
  std::atomic<uint32_t> waited_epoch{0};
  alignas(64) std::atomic<int> status{0};
  // The latest pause's number (pause_other_threads, under the merge lock).
  uint32_t pause_number = 0;
  Clock clock;
  const EventSink* sink = &kSummarySink;  // chosen once, before the runtime is ready
  TraceSettings trace;
  std::atomic<uint32_t> trace_files{0};  // files this image opened (their numbers)
  // The defaults of a runtime preloaded without the CLI are the CLI's (runtime_config.h).
  uint32_t hold_sample_period = config::kDefaultHoldSamplePeriod;
  uint32_t stack_depth = config::kDefaultStackDepth;  // config stack_depth=N; 0: no stacks
  uint8_t unwind_mode = config::kDefaultUnwind;       // config unwind=fp|dwarf|auto (UnwindMode)
  // config stacks=all: a stack for every acquisition (the site cache's entries are tagged as in
  // trace mode, so every acquisition takes the slow path, which captures it, unbudgeted).
  bool all_stacks = false;
  // The fast path may take a mutex with glibc's trylock done inline (inline_trylock.h) when this
  // is the offset of glibc's tid in a thread's descriptor, not -1.
  int inline_trylock_tid_offset = -1;
  char directory[4096] = {};
  uint32_t pid = 0;
  uint32_t ppid = 0;
  // Counts forks down the process tree (1 at start; a child's is its parent's + 1, wrapping over
  // 1 .. kForkGenerations - 1): part of each thread's owner token (lock_owner.h).
  uint32_t fork_generation = 1;
  bool parent_was_profiled = false;
  // A fork child whose forking signal handler interrupted lockscope's own code, which goes on here
  // and may be half-way through the tables: they are reset once it leaves lockscope
  // (let_go_of_parent_tables).
  bool parent_tables_pending = false;
  uint64_t start_realtime_ns = 0;
  uint64_t start_monotonic_ns = 0;
  uint64_t start_ticks = 0;  // the clock at start_monotonic_ns (trace time 0)
  uint32_t online_cpus = 0;  // CPUs the process could run on at start (usable_cpu_count)
  // The stack captures of timed holds and of new lock-order edges, of every thread together: within
  // a budget of the process's time (StackBudget), besides each thread's own (capture_stack_at).
  std::atomic<uint64_t> shared_stack_ticks{0};
  std::atomic<bool> profile_written{false};
  // The process's profile file, opened under its final name before the process gave up the right
  // to create files in the profile directory (setuid and friends: interpose_credentials.cpp), and
  // which file it is (a program may close the descriptor and reuse its number); -1: none.
  int kept_profile_fd = -1;
  FileIdentity kept_profile{};
  // The thread writing the process's final profile (process_exit.cpp: write_once), 0 when none is
  // under way, and whether the process ends with that write (any path but exec).
  std::atomic<uint32_t> final_writer_tid{0};
  std::atomic<bool> final_write_ends_process{false};
  uint64_t snapshot_interval_ticks = 0;  // 0: no periodic snapshots
  bool log_writes =
      false;  // config log_writes=1: say how long each profile write took (benchmarks)
  std::atomic<uint64_t> next_snapshot_ticks{0};
  InternalLock file_lock;  // the file's write and rename: a late snapshot never replaces the end
  // While an exec's profile is written: NAMED\0RESOLVED\0REASON\0 (exec_verdict.h), its bytes.
  char exec_target[2400] = {};
  uint32_t exec_target_size = 0;
  int exit_status = -1;

  LockTable locks;
  LockOrderTable order;
  HolderStackTable holder_stacks;  // stacks of holds that made a thread wait (holder_stacks.h)
  SiteTable merged;                // sites of threads that are gone; guarded by merge_lock
  ThreadRegistry threads;          // guarded by merge_lock
  InternalLock merge_lock;
  pthread_key_t exit_key = 0;

  std::atomic<uint64_t> counters[format::kCounterSlots] = {};
  // Writes a periodic snapshot when a lock call finds one due (snapshot_if_due): the profile
  // writer is a layer above the recording, which only requests it through this. Set at start-up
  // (lifecycle.cpp) before the runtime is ready, so never null where a snapshot can be due.
  void (*write_snapshot)() = nullptr;
  void count(format::Counter which, uint64_t n = 1) {
    counters[static_cast<uint32_t>(which)].fetch_add(n, std::memory_order_relaxed);
  }
};

// Constant-initialised (usable before any constructor runs); read inline on the hot path.
extern Runtime g_runtime;
inline Runtime& runtime() {
  return g_runtime;
}
// Where events go (event_sink.h): the summary tables or the trace writer, chosen at start-up.
inline const EventSink& sink() {
  return *g_runtime.sink;
}

// Whether a site cache entry (inline or wide) holds the key (lock, site, op), valid or not.
inline bool site_cache_entry_keyed(const SiteCacheEntry& entry, const void* lock, uintptr_t site,
                                   uint16_t op) {
  return entry.lock == lock && entry.site == site && entry.operation == op;
}
// Whether a site cache entry (inline or wide) is the one of (lock, site, op) and still valid:
// filled under cache epoch `epoch` of its thread and the process's current identity epoch.
inline bool site_cache_entry_is(const SiteCacheEntry& entry, const void* lock, uintptr_t site,
                                uint16_t op, uint32_t epoch) {
  return site_cache_entry_keyed(entry, lock, site, op) && entry.epoch == epoch &&
         entry.identity_epoch == g_runtime.identity_epoch.load(std::memory_order_relaxed);
}

inline uint32_t own_epoch(const ThreadState& t) {
  return t.epoch & ~kPauseEpochBit;
}
// Where a lock the thread holds was acquired: its entry's site while the entry is the thread's
// current table's, else 0 (not known).
inline uintptr_t held_acquire_site(const ThreadState& t, const HeldLock& held) {
  return held.entry && held.epoch == own_epoch(t) ? held.entry->key.site : 0;
}

// A slow path's entry, and a blocking call's end: stops here while a profile writer pauses the
// threads (thread_pause.h). One load of a line the fast path reads anyway.
inline void pause_point(ThreadState& self) {
  if (__builtin_expect(g_runtime.pause_requested.load(std::memory_order_relaxed) != 0, 0))
    wait_while_paused(self);
}

// The calling thread's state, or nullptr when it must not record: runtime not ready, a call made
// from inside lockscope (or a signal handler that interrupted it), or a thread that could not get a
// slot.
ThreadState* current_thread_slow();
// __thread, not thread_local: no TLS wrapper call on the hot path (initial-exec, constant init).
extern __thread ThreadState* tls_thread;
// The thread's slot, as tls_thread, but not hidden inside lockscope (InsideLockscope): a fork
// from a signal handler that interrupted lockscope's own code finds the forking thread by it.
extern __thread ThreadState* tls_own_slot;
// The entry of the interposers that have no inline fast path (condvar, semaphore post, barrier):
// also a pause point.
inline ThreadState* current_thread() {
  ThreadState* self = tls_thread;
  if (__builtin_expect(self == nullptr, 0)) self = current_thread_slow();
  if (self) pause_point(*self);
  return self;
}

// Marks `thread` blocked in a call for the scope's lifetime (see BlockedCall). Signal fences keep
// the compiler from moving the marks across the real call; a writer on another thread reads them
// racily, as it reads every live thread's counts.
class BlockedScope {
 public:
  BlockedScope(ThreadState& thread, const void* lock, format::Operation op, uintptr_t site,
               uint64_t since_ticks, const void* released = nullptr)
      : thread_(thread) {
    // The lock last: a writer that sees it reads the rest whole.
    thread.blocked = BlockedCall{nullptr, released, site, since_ticks, static_cast<uint16_t>(op)};
    std::atomic_signal_fence(std::memory_order_seq_cst);
    __atomic_store_n(&thread.blocked.lock, lock, __ATOMIC_RELEASE);
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
  // Unmarked with a full fence, then a pause point: a profile writer that saw the thread blocked
  // (and so did not wait for it) is seen here, before anything is recorded (thread_pause.h).
  ~BlockedScope() { end_blocked_call(thread_); }
  // The same, for a call that never returns to end the scope (a cancelled wait: cancellation.h).
  static void end_blocked_call(ThreadState& thread) {
    __atomic_store_n(&thread.blocked.lock, nullptr, __ATOMIC_SEQ_CST);
    pause_point(thread);
  }
  BlockedScope(const BlockedScope&) = delete;
  BlockedScope& operator=(const BlockedScope&) = delete;

 private:
  ThreadState& thread_;
};

// Marks the calling thread as inside lockscope for the scope's lifetime: its own interposed calls,
// and those of a signal handler that interrupts it, pass through unrecorded. Nests.
//
// The order of the two stores matters, and the compiler must keep it (a signal fence): a signal
// handler that locks between them must see either the thread (it records, as before or after the
// scope) or the mark (it passes through), never neither, where it would register the thread a
// second slot and the thread's counts would be split (seen in trace mode, whose every event
// enters a scope: a thread reported with 2 acquisitions of its 8,206).
extern __thread bool tls_inside;
// Runtime::parent_tables_pending's work, when the code a forking signal handler interrupted leaves
// lockscope (the end of the outermost InsideLockscope scope, or of a thread's registration): the
// child's tables, thread slots and traces are reset as after_fork_in_child resets them otherwise.
void let_go_of_parent_tables();
class InsideLockscope {
 public:
  InsideLockscope() : saved_(tls_thread), was_inside_(tls_inside) {
    tls_inside = true;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    tls_thread = nullptr;
  }
  ~InsideLockscope() {
    if (!was_inside_ && __builtin_expect(g_runtime.parent_tables_pending, 0))
      let_go_of_parent_tables();
    tls_thread = saved_;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    tls_inside = was_inside_;
  }
  InsideLockscope(const InsideLockscope&) = delete;
  InsideLockscope& operator=(const InsideLockscope&) = delete;

 private:
  ThreadState* saved_;
  bool was_inside_;
};

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

// True while the calling thread runs lockscope's own code (an InsideLockscope scope).
inline bool inside_lockscope() {
  return tls_inside;
}
// Starts the runtime once (configuration, clock, fork and signal handlers: lifecycle.cpp, the
// layer above, which defines it): the first lock call of the process, or the constructor, comes
// through current_thread_slow. True when the runtime is ready.
bool ensure_initialized();
// The process's and its parent's ids, start times and CPUs, at start-up and in a fork child.
void reset_process_identity(Runtime& rt);
// The thread's pthread key destructor (registered at start-up).
void thread_exit_destructor(void* value);
// A fork child's state, in two steps around its running marker (lifecycle.cpp,
// after_fork_in_child): its identity (false: the runtime was not ready, nothing to reset), then its
// locks, counters and tables.
bool reset_identity_in_fork_child();
void reset_state_in_fork_child();
// True when any lock operation was recorded in this process image (so an exec that follows a
// fork with no locking in between leaves no empty file behind).
bool has_recorded_events();
// Reads /proc/self/task/<tid>/comm into `name` (keeps the old name on failure).
void read_thread_name(uint32_t tid, char (&name)[16]);

}  // namespace lockscope::runtime
