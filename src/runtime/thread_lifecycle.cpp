// A thread's slot over its life (registration at its first call, its exit destructor, a fork
// child's reset of the slots and tables it inherited) and the process identity the slots carry:
// the threads' side of runtime_state.h, above it and the units it is built of (the registry, the
// site caches, the facts and the pause), which this reads.
#include "runtime/thread_lifecycle.h"

#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <new>

#include "common/decimal_text.h"
#include "runtime/cancellation.h"
#include "runtime/errno_guard.h"
#include "runtime/own_proc_files.h"
#include "runtime/owner_token.h"
#include "runtime/raw_log.h"
#include "runtime/real_functions.h"
#include "runtime/runtime_state.h"
#include "runtime/signals_blocked.h"
#include "runtime/thread_facts.h"
#include "runtime/thread_pause.h"
#include "runtime/wide_site_cache.h"

namespace lockscope::runtime {

// The runtime's state, constant-initialised (usable before any constructor runs). Defined here,
// beside the code that reads it most off the fast path: in the defining file the compiler
// addresses its fields directly (elsewhere, through the address of g_runtime).
__thread ThreadState* tls_thread = nullptr;
__thread ThreadState* tls_own_slot = nullptr;
__thread bool tls_inside = false;
constinit Runtime g_runtime;
bool g_parent_tables_pending = false;
namespace {
__thread bool tls_unregistered = false;  // no slot could be had: pass through from now on
// A thread whose registration found the runtime's lock held for over kMaxPauseNs: the clock's
// ticks until which its calls pass through unrecorded, then it tries again, without waiting
// (0: not deferred). See register_thread.
__thread uint64_t tls_registration_retry_ticks = 0;
constexpr double kRegistrationRetrySeconds = 0.01;
}  // namespace

void read_thread_name(uint32_t tid, char (&name)[16]) {
  NoCancellation no_cancellation;  // no cancellation point of ours (cancellation.h)
  char path[64] = "/proc/self/task/";
  const size_t n = append_decimal(path, std::strlen(path), sizeof(path) - 6, tid);
  std::memcpy(path + n, "/comm", 6);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char buffer[32];
  const ssize_t got = read(fd, buffer, sizeof(buffer) - 1);
  close(fd);
  if (got <= 0) return;
  size_t length = static_cast<size_t>(got);
  while (length && (buffer[length - 1] == '\n' || buffer[length - 1] == '\0')) --length;
  if (length > 15) length = 15;
  std::memcpy(name, buffer, length);
  name[length] = '\0';
}

namespace {

// The process's and its parent's ids from /proc/self/stat ("pid (name) state ppid ..."), for a
// process whose getpid and getppid a seccomp filter refuses (the runtime then says it cannot
// write the profile, naming the process by its id, not by -1); false when that fails too.
bool ids_from_proc(uint32_t& pid, uint32_t& ppid) {
  NoCancellation no_cancellation;  // no cancellation point of ours (cancellation.h)
  char stat[512];
  const char* fields = read_stat_fields("/proc/self/stat", stat);
  if (fields == nullptr) return false;
  const char* end = stat + sizeof(stat);
  const char* at_pid = stat;
  const char* at_ppid = fields + 2;  // "S " before the parent's id
  uint64_t own = 0, parent = 0;
  if (!parse_decimal(at_pid, end, own) || !parse_decimal(at_ppid, end, parent)) return false;
  pid = static_cast<uint32_t>(own);
  ppid = static_cast<uint32_t>(parent);
  return true;
}

}  // namespace

void reset_process_identity(Runtime& rt) {
  const pid_t pid = getpid();
  const pid_t ppid = getppid();
  rt.pid = static_cast<uint32_t>(pid);
  rt.ppid = static_cast<uint32_t>(ppid);
  uint32_t proc_pid = 0, proc_ppid = 0;
  if ((pid < 0 || ppid < 0) && ids_from_proc(proc_pid, proc_ppid)) {
    if (pid < 0) rt.pid = proc_pid;
    if (ppid < 0) rt.ppid = proc_ppid;
  }
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  rt.start_realtime_ns =
      static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
  rt.start_monotonic_ns = Clock::monotonic_ns();
  rt.start_ticks = rt.clock.now();
  rt.shared_stack_ticks.store(0, std::memory_order_relaxed);
  rt.online_cpus = usable_cpu_count();  // a fork child's: its forking thread's, inherited
}

namespace {

// Called marked inside lockscope (current_thread_slow), so the merge lock is signal-safe here.
ThreadState* register_thread() {
  Runtime& rt = g_runtime;
  uint64_t dropped = 0;
  // Not for ever: a profile's writer may hold the lock long (its open() of the file may be the
  // program's own, or slow; no signal handler runs inside it since its signals are blocked).
  // Waited for once, at most kMaxPauseNs; then the thread's calls pass through unrecorded
  // (counted) and it tries again every kRegistrationRetrySeconds, without waiting, so that a
  // thread that came during a long profile write is recorded from then on.
  ThreadState* self;
  {
    const SignalsBlocked held;  // no handler runs while the lock is held (signals_blocked.h)
    if (!(tls_registration_retry_ticks == 0 ? rt.merge_lock.lock_within(kMaxPauseNs)
                                            : rt.merge_lock.try_lock())) {
      tls_registration_retry_ticks =
          rt.clock.now() +
          static_cast<uint64_t>(rt.clock.ticks_per_second * kRegistrationRetrySeconds);
      return nullptr;
    }
    tls_registration_retry_ticks = 0;
    const ProcessOfThreads process{
        rt.pid, [](const ThreadState& gone) { return thread_facts_record(g_runtime, gone); }};
    self = rt.threads.claim(rt.merged, dropped, process);
    // Its epoch starts again at 1, so another thread's wide cache entries could look valid.
    if (self) wide_cache_release(self->wide_cache);
    rt.merge_lock.unlock();
  }
  if (dropped) rt.count(format::Counter::kDroppedSites, dropped);
  if (!self) {
    rt.count(format::Counter::kDroppedThreads);
    return nullptr;
  }
  self->tid = static_cast<uint32_t>(syscall(SYS_gettid));
  self->owner_token = owner_token(self->tid, rt.fork_generation);
  self->handle = pthread_self();
  self->first_ticks = rt.clock.now();  // also its start in the profile (thread_facts.h)
  self->stack_ticks = 0;
  self->hold_stack_ticks = 0;
  if (self->tid == rt.pid) self->flags |= format::kThreadMain;
  // Its policy as it starts (pthread_attr_setschedpolicy); its exit and the profile's writer read
  // it again, so a later change shows.
  read_thread_sched(0, self->facts);
  // The name is read at the thread's exit and, for threads still running, when the profile is
  // written: a read here would cost a third of a short-lived thread's start.
  rt.count(format::Counter::kThreadsSeen);
  if (!(self->flags & format::kThreadMain)) pthread_setspecific(rt.exit_key, self);
  sink().thread_event(*self, format::TraceKind::kThreadStart);
  return self;
}

}  // namespace

// The thread's pthread key destructor: other keys' destructors and signal handlers may still lock
// after it, so the slot stays the thread's and keeps recording (thread_registry.h).
void thread_exit_destructor(void* value) {
  auto* self = static_cast<ThreadState*>(value);
  Runtime& rt = g_runtime;
  if (!self || static_cast<uint32_t>(getpid()) != rt.pid) return;
  InsideLockscope inside;
  note_thread_exit(*self);  // its end, CPU time and policy, before the rest of its exit adds any
  prctl(PR_GET_NAME, self->name);  // the calling thread's own name, in one system call
  sink().thread_event(*self, format::TraceKind::kThreadExit);
  // Not for ever: a profile's writer may hold the lock long (see register_thread). Then the
  // lock's next holder marks it.
  const SignalsBlocked held;  // no handler runs while the lock is held (signals_blocked.h)
  if (!rt.merge_lock.lock_within(kMaxPauseNs)) return rt.threads.mark_exiting_later(*self);
  rt.threads.take_late_exits();
  rt.threads.mark_exiting(*self);
  rt.merge_lock.unlock();
}

namespace {

// The child's tables, thread slots and traces: the parent's are let go of, and the forking
// thread's slot (`self`, nullptr when it had none) becomes the child's main thread.
void reset_child_tables(Runtime& rt, ThreadState* self) {
  NoCancellation no_cancellation;  // no cancellation point of ours (cancellation.h)
  // The parent's other threads do not exist here, and the child's profile starts empty.
  rt.threads.reset_after_fork(self);
  // Every mapped trace file is the parent's: let go of them, untouched, and of the descriptor
  // another thread's supply had open when the program forked.
  for (size_t i = 0; i < rt.threads.slot_count(); ++i) {
    TraceBuffer& trace = rt.threads.slot(i).trace;
    if (const int fd_plus_one = __atomic_load_n(&trace.supply_fd_plus_one, __ATOMIC_RELAXED))
      close(fd_plus_one - 1);
    forget_trace(trace);
  }
  rt.trace_files.store(0, std::memory_order_relaxed);
  rt.merged.reset();
  rt.locks.reset_after_fork();
  rt.order.reset_after_fork();
  rt.holder_stacks.reset_after_fork();
  if (!self) return;
  // The forking thread continues in the child, still holding what it held: keep its held locks
  // (untimed, their entries stale under the new epoch below) so their unlocks balance.
  //
  // A fork from a signal handler returns into the code the handler interrupted, which may be a
  // lock call of this thread half-way through: with a stats entry of its table in hand, a held
  // lock's entry, or a site cache entry in a window (open_cache_window). So the parent's table is
  // left mapped, not unmapped (that call's last counts go there, unseen; the child's profile starts
  // empty anyway), held locks keep their entry pointers, and the site caches are emptied only when
  // no window is open (the new epoch makes every entry stale in any case).
  self->sites.abandon();
  self->wide_entries = 0;  // its wide cache stays, every entry stale under the new epoch
  const uint32_t depth = self->held_depth;
  const uint32_t cache_windows = self->cache_windows;
  std::memset(static_cast<void*>(self), 0, offsetof(ThreadState, sites));
  self->cache_windows = cache_windows;
  if (cache_windows == 0)
    std::memset(static_cast<void*>(self->site_cache), 0, sizeof(self->site_cache));
  self->tid = rt.pid;
  self->owner_token = owner_token(self->tid, rt.fork_generation);
  self->handle = pthread_self();
  self->flags = format::kThreadMain;
  self->facts = ThreadFacts{};
  read_thread_sched(0, self->facts);
  self->epoch = own_epoch(*self) + 1;
  self->paused.store(0, std::memory_order_relaxed);
  self->held_depth = depth;
  for (uint32_t i = 0; i < depth; ++i) {
    self->held[i].weight = 0;
    self->held[i].stamped = false;
    self->held[i].made_wait = false;
    self->held[i].signalled_slot = 0;
  }
  read_thread_name(self->tid, self->name);
  rt.count(format::Counter::kThreadsSeen);
  sink().thread_event(*self, format::TraceKind::kThreadStart);
}

}  // namespace

bool reset_identity_in_fork_child() {
  Runtime& rt = g_runtime;
  if (rt.status.load(std::memory_order_acquire) != static_cast<int>(RuntimeStatus::kReady))
    return false;
  rt.merge_lock.reset();
  rt.file_lock.reset();
  // The forking thread's registration may have been deferred (the parent's lock held): the
  // child's is free.
  tls_registration_retry_ticks = 0;
  // A writer of the parent may have been pausing its threads: none does here.
  rt.pause_requested.store(0, std::memory_order_relaxed);
  if (rt.snapshot_interval_ticks)
    rt.next_snapshot_ticks.store(rt.clock.now() + rt.snapshot_interval_ticks);
  // The forking process, which getppid() no longer names if it has ended already (a daemon's
  // parent that exits at once may well have before this child first runs).
  const uint32_t parent = rt.pid;
  reset_process_identity(rt);
  rt.ppid = parent;
  return true;
}

void reset_state_in_fork_child() {
  Runtime& rt = g_runtime;
  rt.parent_was_profiled = true;
  rt.profile_written.store(false, std::memory_order_relaxed);
  // The parent's file, not this child's: let go of (the descriptor stays the program's to close:
  // it may have closed ours and reused the number).
  rt.kept_profile_fd = -1;
  rt.final_writer_tid.store(0, std::memory_order_relaxed);  // a parent's thread, not this child's
  rt.final_write_ends_process.store(false, std::memory_order_relaxed);
  rt.exit_status = -1;
  for (auto& counter : rt.counters) counter.store(0, std::memory_order_relaxed);
  // Owner words the parent's threads left in the child's copy of its mutexes name no owner here.
  rt.fork_generation = rt.fork_generation % (kForkGenerations - 1) + 1;
  // A signal handler that forked may have interrupted this thread inside lockscope's own code (a
  // table's insert, a thread slot's claim, a hold's timing), which goes on in the child once the
  // handler returns: the tables, slots and traces it may be half-way through are reset only when
  // it leaves lockscope (let_go_of_parent_tables, from its scope's end).
  if (inside_lockscope()) {
    g_parent_tables_pending = true;
    return;
  }
  reset_child_tables(rt, tls_thread);
}

void let_go_of_parent_tables() {
  Runtime& rt = g_runtime;
  g_parent_tables_pending = false;
  reset_child_tables(rt, tls_own_slot);
}

ThreadState* current_thread_slow() {
  Runtime& rt = g_runtime;
  if (tls_inside || tls_unregistered) {
    rt.count(format::Counter::kReentrantCalls);
    return nullptr;
  }
  if (rt.status.load(std::memory_order_acquire) != static_cast<int>(RuntimeStatus::kReady) &&
      !ensure_initialized()) {
    if (rt.status.load(std::memory_order_acquire) == static_cast<int>(RuntimeStatus::kInitializing))
      rt.count(format::Counter::kBootstrapCalls);
    return nullptr;
  }
  if (tls_registration_retry_ticks != 0 && rt.clock.now() < tls_registration_retry_ticks) {
    rt.count(format::Counter::kCallsBeforeRegistration);
    return nullptr;
  }
  const ErrnoGuard keep_errno;
  tls_inside = true;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  // A signal handler that locked between the caller's read of tls_thread and the mark above may
  // have registered the thread, or found no slot for it: not a second slot (the first would be
  // left live for ever, with the handler's calls).
  if (tls_thread != nullptr || tls_unregistered) {
    ThreadState* registered = tls_thread;
    if (registered == nullptr) rt.count(format::Counter::kReentrantCalls);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    tls_inside = false;
    return registered;
  }
  ThreadState* self = register_thread();
  // The thread (or its refusal) before the mark goes (see InsideLockscope): a signal handler that
  // locks in between must not register the thread again.
  tls_own_slot = self;
  // A fork from a signal handler that interrupted the claim above: the child's reset comes now.
  if (__builtin_expect(g_parent_tables_pending, 0)) let_go_of_parent_tables();
  tls_thread = self;
  if (tls_registration_retry_ticks != 0)  // deferred (register_thread)
    rt.count(format::Counter::kCallsBeforeRegistration);
  else if (!self)
    tls_unregistered = true;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  tls_inside = false;
  return self;
}

bool has_recorded_events() {
  Runtime& rt = g_runtime;
  if (rt.merged.used() > 0 || rt.threads.finished_count() > 0) return true;
  for (size_t i = 0; i < rt.threads.slot_count(); ++i) {
    const ThreadState& t = rt.threads.slot(i);
    if (t.state.load(std::memory_order_acquire) == static_cast<uint32_t>(SlotState::kFree))
      continue;
    if (t.acquisitions + t.releases + t.failed > 0 || t.sites.used() > 0) return true;
  }
  return false;
}

}  // namespace lockscope::runtime
