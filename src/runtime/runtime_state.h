// The runtime's process-wide state (the per-thread recording state is thread_state.h's).
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
#include <cstdint>

#include "common/profile_format.h"
#include "common/runtime_config.h"
#include "runtime/clock.h"
#include "runtime/event_sink.h"
#include "runtime/file_identity.h"
#include "runtime/holder_stacks.h"
#include "runtime/inside_lockscope.h"
#include "runtime/internal_lock.h"
#include "runtime/lock_order.h"
#include "runtime/lock_table.h"
#include "runtime/site_table.h"
#include "runtime/thread_registry.h"
#include "runtime/thread_state.h"
#include "runtime/trace_writer.h"

namespace lockscope::runtime {

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
  // (Whether a fork child still has its parent's tables to let go of: g_parent_tables_pending,
  // inside_lockscope.h. Its byte here was padding before start_realtime_ns: no offset moved.)
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

// Whether a site cache entry (inline or wide) is the one of (lock, site, op) and still valid:
// filled under cache epoch `epoch` of its thread and the process's current identity epoch.
inline bool site_cache_entry_is(const SiteCacheEntry& entry, const void* lock, uintptr_t site,
                                uint16_t op, uint32_t epoch) {
  return site_cache_entry_keyed(entry, lock, site, op) && entry.epoch == epoch &&
         entry.identity_epoch == g_runtime.identity_epoch.load(std::memory_order_relaxed);
}

// The slow side of pause_point: sleeps while a pause is requested (thread_pause.cpp, the layer
// above, which defines it with the writer's side of the pause).
void wait_while_paused(ThreadState& self);
// A slow path's entry, and a blocking call's end: stops here while a profile writer pauses the
// threads (thread_pause.h). One load of a line the fast path reads anyway.
inline void pause_point(ThreadState& self) {
  if (__builtin_expect(g_runtime.pause_requested.load(std::memory_order_relaxed) != 0, 0))
    wait_while_paused(self);
}

// The calling thread's state, or nullptr when it must not record: runtime not ready, a call made
// from inside lockscope (or a signal handler that interrupted it), or a thread that could not get a
// slot. (thread_lifecycle.cpp, the layer above, defines it: a thread's first call registers it.)
ThreadState* current_thread_slow();
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

// Starts the runtime once (configuration, clock, fork and signal handlers: lifecycle.cpp, the
// layer above, which defines it): the first lock call of the process, or the constructor, comes
// through current_thread_slow. True when the runtime is ready.
bool ensure_initialized();

}  // namespace lockscope::runtime
