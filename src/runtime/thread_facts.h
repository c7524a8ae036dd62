// What the profile says of a thread besides its lock calls (format::ThreadFactsRecord): when it
// lived, the CPU time it used, its scheduling policy and priority; and of the process, the CPUs it
// could run on. Findings need them: a lock's waits as a share of its threads' lives, more runnable
// threads than CPUs, a SCHED_FIFO thread waiting behind a SCHED_OTHER holder.
//
// None of it is read on the hot path. A thread's start is the clock read its registration makes
// anyway (ThreadState::first_ticks); its policy is read when it registers, by the thread itself at
// its exit destructor (with its CPU time and its end), and for threads still running by the
// profile's writer, which reads their CPU clock by tid, never through their pthread descriptor (a
// detached thread that has just ended may have freed it). All of it is system calls without
// allocation or locks (clock_gettime, sched_getscheduler, sched_getparam): safe in the writer's
// path, which a fatal signal's stand-in also takes, and in a thread's exit. errno is kept.
#pragma once

#include <cstdint>

#include "common/profile_format.h"
#include "runtime/thread_state.h"  // ThreadFacts

namespace lockscope::runtime {

struct ThreadState;
struct Runtime;

// Reads the policy and priority of thread `tid` (0: the calling thread) into `facts`; left as they
// were when the thread cannot be asked (gone, or a seccomp filter refuses the calls).
void read_thread_sched(uint32_t tid, ThreadFacts& facts);
// The thread's own end: the clock, its CPU time and its policy, read by the exiting thread.
void note_thread_exit(ThreadState& self);
// The thread's record (but for its index into kThreads): for a thread still running (not flagged
// exited) its CPU time and policy are read now, by tid (what its registration saw of the policy
// stays when that fails); for one that exited, what it read itself at its exit.
format::ThreadFactsRecord thread_facts_record(const Runtime& rt, const ThreadState& thread);
// CPUs the calling thread may run on (sched_getaffinity), else the online CPUs; 0 if neither.
uint32_t usable_cpu_count();

}  // namespace lockscope::runtime
