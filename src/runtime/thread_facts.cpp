#include "runtime/thread_facts.h"

#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "runtime/errno_guard.h"
#include "runtime/runtime_state.h"

namespace lockscope::runtime {
namespace {

// The CPU-time clock of thread `tid` of this process, made as glibc's pthread_getcpuclockid makes
// it (the kernel's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED): ~tid << 3 | per-thread 4 | sched 2),
// from the tid alone. The kernel answers only for a thread of the caller's own process (EINVAL
// otherwise), so a tid reused by another process's thread is never read.
clockid_t thread_cpu_clock(uint32_t tid) {
  return static_cast<clockid_t>((~tid << 3) | 4u | 2u);
}

bool read_cpu_ns(clockid_t clock, uint64_t& ns) {
  timespec used;
  if (clock_gettime(clock, &used) != 0) return false;
  ns = static_cast<uint64_t>(used.tv_sec) * 1000000000ull + static_cast<uint64_t>(used.tv_nsec);
  return true;
}

// ns since the runtime's start of a clock reading (0 for one before it).
uint64_t since_start_ns(const Runtime& rt, uint64_t ticks) {
  return ticks > rt.start_ticks ? rt.clock.to_ns(ticks - rt.start_ticks) : 0;
}

}  // namespace

void read_thread_sched(uint32_t tid, ThreadFacts& facts) {
  const ErrnoGuard keep_errno;
  const auto id = static_cast<pid_t>(tid);
  // The policy may carry SCHED_RESET_ON_FORK, which is no policy of its own.
  const int policy = sched_getscheduler(id);
  sched_param param{};
  if (policy >= 0 && sched_getparam(id, &param) == 0) {
    facts.sched_policy = policy & ~SCHED_RESET_ON_FORK;
    facts.sched_priority = param.sched_priority;
    facts.known |= format::kThreadSchedKnown;
  }
}

void note_thread_exit(ThreadState& self) {
  const ErrnoGuard keep_errno;
  ThreadFacts& facts = self.facts;
  // The CPU time first: what the exit costs after this is the runtime's, not the program's.
  if (read_cpu_ns(CLOCK_THREAD_CPUTIME_ID, facts.cpu_ns)) facts.known |= format::kThreadCpuKnown;
  facts.end_ticks = g_runtime.clock.now();
  read_thread_sched(0, facts);
}

format::ThreadFactsRecord thread_facts_record(const Runtime& rt, const ThreadState& thread) {
  format::ThreadFactsRecord record{};
  ThreadFacts facts = thread.facts;
  const bool exited = (thread.flags & format::kThreadExited) != 0;
  // An exited thread's facts were written before it was flagged exited (under the merge lock, or
  // published with the late-exit list's release), so they are whole here.
  if (!exited) {
    const ErrnoGuard keep_errno;
    uint64_t cpu_ns = 0;
    // The CPU clock of a tid is this process's own thread's only: when it is not (the thread
    // died without our exit hook, and the tid may be another process's now), nor is its policy.
    if (read_cpu_ns(thread_cpu_clock(thread.tid), cpu_ns)) {
      facts.cpu_ns = cpu_ns;
      facts.known |= format::kThreadCpuKnown;
      read_thread_sched(thread.tid, facts);
    }
  }
  if (!exited || facts.end_ticks != 0) {
    record.known |= format::kThreadLifetimeKnown;
    // The main thread ran before the runtime started (in a fork child: it is the forking thread).
    record.start_ns =
        (thread.flags & format::kThreadMain) ? 0 : since_start_ns(rt, thread.first_ticks);
    // An exited thread's end is never 0, which says "still running".
    if (exited) {
      record.end_ns = since_start_ns(rt, facts.end_ticks);
      if (record.end_ns < record.start_ns) record.end_ns = record.start_ns;
      if (record.end_ns == 0) record.end_ns = 1;
    }
  }
  record.known |= facts.known & (format::kThreadCpuKnown | format::kThreadSchedKnown);
  record.cpu_ns = facts.cpu_ns;
  record.sched_policy = facts.sched_policy;
  record.sched_priority = facts.sched_priority;
  return record;
}

uint32_t usable_cpu_count() {
  const ErrnoGuard keep_errno;
  // A 1,024-CPU mask (128 bytes: this runs in a fork child, perhaps on a signal handler's small
  // stack); a machine with more CPUs than that makes sched_getaffinity fail (EINVAL), and the
  // online count is used instead.
  cpu_set_t mask;
  uint32_t count = 0;
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0) {
    count = static_cast<uint32_t>(CPU_COUNT(&mask));
  } else {
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    count = online > 0 ? static_cast<uint32_t>(online) : 0;
  }
  return count;
}

}  // namespace lockscope::runtime
