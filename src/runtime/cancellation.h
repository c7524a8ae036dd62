// Thread cancellation (pthread_cancel) and the runtime.
//
// Two ways a cancellation could change what the program does, or what the profile says:
//
// * The runtime's own work reaching a cancellation point (open, read, write, pwrite, close,
//   nanosleep) on a thread whose cancellation is pending: the thread was unwound from inside
//   lockscope, its internal locks held. A program that cancelled a thread while it locked, run
//   with --snapshot-interval, hung for good when that thread wrote a snapshot (its merge lock was
//   never let go of); and a log line written from pthread_mutex_lock made a call that is no
//   cancellation point one. Every such piece of the runtime runs inside a NoCancellation scope.
//
// * The program's own cancellation points that lockscope wraps (the condition waits, the semaphore
//   waits) acted upon inside the real call: glibc unwinds the thread past the wrapper, which never
//   recorded the wait nor put its state back. A cancelled condition wait was missing from the
//   profile, its mutex counted as held for the whole wait (which had let go of it), the condvar
//   counted a waiter for the rest of the run; a cancelled sem_wait counted as an acquisition.
//   call_cancellable runs the wrapper's own clean-up then, before the program's clean-up handlers
//   (glibc runs handlers innermost first: its own, which re-takes a condition wait's mutex, then
//   ours, then the program's, which usually unlocks that mutex).
//
// Both with glibc's own interfaces, in libc: pthread_setcancelstate, and the clean-up buffers that
// pthread_cleanup_push registers in code built without exceptions (as the runtime is).
#pragma once

#include <pthread.h>

namespace lockscope::runtime {

// Cancellation disabled for the scope's lifetime, then put back as it was (a cancellation that
// came meanwhile stays pending, to be acted upon at the program's next cancellation point).
// pthread_setcancelstate is a couple of atomic operations on the thread's own word, safe in a
// signal handler.
class NoCancellation {
 public:
  NoCancellation() { pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &previous_); }
  ~NoCancellation() { pthread_setcancelstate(previous_, nullptr); }
  NoCancellation(const NoCancellation&) = delete;
  NoCancellation& operator=(const NoCancellation&) = delete;

 private:
  int previous_ = PTHREAD_CANCEL_ENABLE;
};

template <typename Cleanup>
void run_cancellation_cleanup(void* cleanup) {
  static_cast<Cleanup*>(cleanup)->cancelled();
}

// `call()`, a real call that is a cancellation point; when the thread is cancelled inside it,
// `cleanup.cancelled()` runs before the cancellation goes on (the call then never returns). Not
// inlined (it sets a jump buffer); a few nanoseconds, on calls that block.
template <typename Call, typename Cleanup>
__attribute__((noinline)) int call_cancellable(const Call& call, Cleanup& cleanup) {
  int result;
  pthread_cleanup_push(&run_cancellation_cleanup<Cleanup>, &cleanup);
  result = call();
  pthread_cleanup_pop(0);
  return result;
}

}  // namespace lockscope::runtime
