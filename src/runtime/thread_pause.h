// Stopping the program's other threads at a call boundary while a profile's snapshot is taken, so
// that it is one moment's: per lock no more releases than acquisitions, the threads' totals equal
// to their sites', no hold begun after the clock read that ends it.
//
// Nothing on the hot path: the writer sets a bit in each thread's epoch (kPauseEpochBit), which
// no site cache entry and no held lock carries, so the inline fast paths of that thread all miss
// and take the slow paths, whose entries (and the end of every blocking call) are pause points:
// there the thread says it is paused and sleeps on a futex until the writer is done.
//
// The writer waits for each other thread, up to kPauseWaitNs, to be seen paused, blocked in a
// real call (BlockedCall: what it did before is recorded, what comes after waits at the pause
// point that ends the call), asleep in the kernel outside any lock call, or gone. A thread still
// running then (computing, or preempted on a fast path) is counted (Counter::kThreadsNotPaused):
// its figures may be one call off. A thread that registers meanwhile waits at its first call (at
// most kMaxPauseNs: then its calls pass through unrecorded until it can, see register_thread).
//
// Dekker on both ends where a thread can slip past unseen: the writer's request and the thread's
// "paused" or "no longer blocked" mark are each followed by a full fence before the other's read.
// Only the rare paths pay for it (a blocking call's end, a paused thread's wake-up).
#pragma once

#include <cstdint>

#include "runtime/epoch_word.h"  // kPauseEpochBit

namespace lockscope::runtime {

struct Runtime;

inline constexpr uint64_t kPauseWaitNs = 20'000'000;
// The longest a thread stays paused for one pause: then it lets every paused thread go on, the
// pause given up (the writer's later resume finds it gone, and its snapshot counts the threads
// that made calls while it was written as not paused). A writer that stalls may resume them late
// or never: no signal handler runs inside its write (signals_blocked.h), but it calls the
// program's own open(), if the program defines one, and a slow filesystem's. Far longer than a
// snapshot's pause takes (a memcached-sized profile's whole write: ~100 ms). A thread's exit
// waits for the merge lock no longer either (thread_exit_destructor).
inline constexpr uint64_t kMaxPauseNs = 1'000'000'000;

// Called with the merge lock held (threads register and leave under it, so the slots hold still;
// and one writer pauses at a time: a signal handler's write only tries for that lock, so it never
// waits for a pause its own thread began). Returns how many threads could not be stopped. Notes
// what each thread had done by then (ThreadState::calls_when_paused).
uint32_t pause_other_threads(Runtime& rt);
// Lets them go on; after pause_other_threads, merge lock still held. False when the paused
// threads had given the pause up (kMaxPauseNs) and gone on before.
bool resume_other_threads(Runtime& rt);
// The thread's side, wait_while_paused (defined here), is declared beside pause_point
// (runtime_state.h), which calls it.

}  // namespace lockscope::runtime
