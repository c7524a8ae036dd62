// The calling thread's catchable signals blocked for a scope: a signal that comes meanwhile stays
// pending and its handler runs when the scope ends (pthread_sigmask leaves glibc's own
// cancellation and set*id signals unblocked). Not the faults (SIGSEGV, SIGBUS, SIGILL, SIGFPE,
// SIGTRAP, SIGSYS): one cannot wait, and the kernel kills a thread that faults with its fault's
// signal blocked without running any handler (the program's crash reporter, the runtime's
// stand-in that writes the profile).
//
// Used around the final profile write (process_exit.cpp) and around every hold of the runtime's
// merge lock (a snapshot's write, a thread's registration and exit, a dlclose's note): a program's
// handler that ran inside such a hold could end the process half-way through it, or not return
// for as long as it liked while the lock stayed held, and another thread that ended the process
// with exit() then waited for ever for that lock in its final write. Two system calls per hold:
// holds are per thread, per snapshot and per unloaded module, never per lock call.
#pragma once

#include <signal.h>

namespace lockscope::runtime {

class SignalsBlocked {
 public:
  // `restore`: the mask comes back at the scope's end (not when the process ends next: _exit).
  explicit SignalsBlocked(bool restore = true) : restore_(restore) {
    sigset_t all;
    sigfillset(&all);
    for (const int fault : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS})
      sigdelset(&all, fault);
    pthread_sigmask(SIG_BLOCK, &all, &previous_);
  }
  ~SignalsBlocked() {
    if (restore_) pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  SignalsBlocked(const SignalsBlocked&) = delete;
  SignalsBlocked& operator=(const SignalsBlocked&) = delete;

 private:
  sigset_t previous_;
  bool restore_;
};

}  // namespace lockscope::runtime
