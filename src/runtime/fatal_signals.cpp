// A profile even when the program dies of a signal. For every signal whose default action ends the
// process (SIGINT, SIGTERM, SIGSEGV, SIGABRT, ...), while the program leaves it at SIG_DFL, our
// handler stands in for the default: it writes the profile (async-signal-safe: mmap, open, write,
// rename; the internal lock only tried), puts SIG_DFL back and re-raises, so the process still dies
// of the same signal (core dump included) and its parent sees the same status.
//
// The program never sees the stand-in: sigaction(), signal(), bsd_signal() and sysv_signal() are
// interposed. A handler or SIG_IGN the program installs goes to the kernel unchanged (and replaces
// ours); SIG_DFL puts ours back; a query returns what the program set. Not seen: the raw
// rt_sigaction system call and sigset() (their SIG_DFL is then the kernel's: no profile).
//
// A one-shot handler (SA_RESETHAND, as sysv_signal sets) would have the kernel reset the
// disposition to its own SIG_DFL on delivery, past us, and a re-raise from it would end the
// process unrecorded. The kernel gets a trampoline instead, with the program's mask and flags but
// SA_RESETHAND: on delivery it does the reset itself (to our stand-in, which the program sees as
// SIG_DFL with its flags kept, as the kernel's reset leaves them), then calls the handler.
#include "runtime/fatal_signals.h"

#include <dlfcn.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

#include "runtime/errno_guard.h"
#include "runtime/interpose.h"
#include "runtime/process_exit.h"

extern "C" int __sigaction(int, const struct sigaction*, struct sigaction*);  // glibc's alias

namespace lockscope::runtime {
namespace {

constexpr int kFatalSignals[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGILL,  SIGABRT, SIGBUS,
                                 SIGFPE,  SIGSEGV, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1,
                                 SIGUSR2, SIGXCPU, SIGXFSZ, SIGSYS};

struct Disposition {
  std::atomic<bool> stand_in;  // our handler is in the kernel in place of the program's SIG_DFL
  std::atomic<bool> one_shot;  // our trampoline is, in place of the program's SA_RESETHAND one
  struct sigaction program;    // what the program last set (valid while either is)
};
Disposition g_dispositions[NSIG];

using SigactionFunction = int (*)(int, const struct sigaction*, struct sigaction*);
SigactionFunction real_sigaction() {
  static std::atomic<SigactionFunction> resolved{nullptr};
  SigactionFunction f = resolved.load(std::memory_order_acquire);
  if (!f) {
    // glibc's own alias needs no lookup (dlsym may not be usable yet); another preloaded tool's
    // sigaction, if any, comes first.
    f = reinterpret_cast<SigactionFunction>(dlsym(RTLD_NEXT, "sigaction"));
    if (!f) f = &__sigaction;
    resolved.store(f, std::memory_order_release);
  }
  return f;
}

bool is_fault(int signal_number) {
  return signal_number == SIGSEGV || signal_number == SIGBUS || signal_number == SIGILL ||
         signal_number == SIGFPE || signal_number == SIGSYS;
}

bool is_fatal(int signal_number) {
  for (int s : kFatalSignals)
    if (s == signal_number) return true;
  return false;
}

void on_fatal_signal(int signal_number, siginfo_t* info, void*) {
  // Process 1 of a PID namespace (a container's init): the kernel ignores every signal but a fault
  // while its disposition is the default (from outside its namespace only SIGKILL and SIGSTOP get
  // through). The stand-in is no default: the signal reached it, the profile was written as the
  // process's end, the re-raise was ignored, and the program ran on unrecorded (its report said
  // "ended by SIGTERM"). Such a signal (sent, a timer's, a terminal's, SIGPIPE, SIGXCPU...) is
  // ignored here as it would be; a fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGSYS raised by the
  // kernel for an instruction: si_code > 0) ends it as any process.
  if (getpid() == 1 && !(is_fault(signal_number) && info != nullptr && info->si_code > 0)) return;
  // On return, a signal that is blocked again by then stays pending.
  const ErrnoGuard keep_errno;
  write_profile_on_signal(signal_number);
  // Die of it as if we had never been here: the default action, unblocked, raised again. A
  // fault (SIGSEGV, SIGBUS...) would also recur on return; raising makes every kind end here.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  real_sigaction()(signal_number, &default_action, nullptr);
  g_dispositions[signal_number].stand_in.store(false, std::memory_order_relaxed);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signal_number);
  sigprocmask(SIG_UNBLOCK, &only, nullptr);
  syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), signal_number);
}

int install_stand_in(int signal_number) {
  struct sigaction ours {};
  ours.sa_sigaction = on_fatal_signal;
  ours.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigfillset(&ours.sa_mask);
  return real_sigaction()(signal_number, &ours, nullptr);
}

// The program's one-shot handler, delivered: the kernel's reset done here, to the stand-in.
void on_one_shot_signal(int signal_number, siginfo_t* info, void* context) {
  Disposition& d = g_dispositions[signal_number];
  const struct sigaction handler = d.program;
  d.program.sa_handler = SIG_DFL;  // the kernel's reset changes the handler alone
  d.one_shot.store(false, std::memory_order_relaxed);
  {
    const ErrnoGuard keep_errno;  // the program's handler sees the errno it interrupted
    if (install_stand_in(signal_number) == 0) d.stand_in.store(true, std::memory_order_release);
  }
  if (handler.sa_flags & SA_SIGINFO)
    handler.sa_sigaction(signal_number, info, context);
  else if (handler.sa_handler != SIG_DFL && handler.sa_handler != SIG_IGN)
    handler.sa_handler(signal_number);
}

}  // namespace

void install_fatal_signal_handlers() {
  for (int signal_number : kFatalSignals) {
    struct sigaction current {};
    if (real_sigaction()(signal_number, nullptr, &current) != 0) continue;
    const bool is_default = !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_DFL;
    if (!is_default) continue;
    Disposition& d = g_dispositions[signal_number];
    d.program = current;
    if (install_stand_in(signal_number) == 0) d.stand_in.store(true, std::memory_order_release);
  }
}

}  // namespace lockscope::runtime

using lockscope::runtime::g_dispositions;

LOCKSCOPE_EXPORT int sigaction(int signal_number, const struct sigaction* action,
                               struct sigaction* old_action) {
  using namespace lockscope::runtime;
  if (signal_number <= 0 || signal_number >= NSIG || !is_fatal(signal_number))
    return real_sigaction()(signal_number, action, old_action);
  Disposition& d = g_dispositions[signal_number];
  struct sigaction previous {};
  const bool had_stand_in =
      d.stand_in.load(std::memory_order_acquire) || d.one_shot.load(std::memory_order_acquire);
  if (had_stand_in) previous = d.program;
  const bool wants_default =
      action && !(action->sa_flags & SA_SIGINFO) && action->sa_handler == SIG_DFL;
  const bool wants_one_shot = action && !wants_default && (action->sa_flags & SA_RESETHAND) &&
                              ((action->sa_flags & SA_SIGINFO) || action->sa_handler != SIG_IGN);
  int result = 0;
  if (action && wants_default) {
    if (!had_stand_in) result = real_sigaction()(signal_number, nullptr, &previous);
    if (result == 0) result = install_stand_in(signal_number);
    if (result == 0) {
      d.program = *action;
      d.one_shot.store(false, std::memory_order_relaxed);
      d.stand_in.store(true, std::memory_order_release);
    }
  } else if (wants_one_shot) {
    struct sigaction trampoline = *action;
    trampoline.sa_sigaction = on_one_shot_signal;
    trampoline.sa_flags = (action->sa_flags | SA_SIGINFO) & ~SA_RESETHAND;
    d.program = *action;  // before the kernel may deliver to the trampoline
    d.one_shot.store(true, std::memory_order_release);
    result = real_sigaction()(signal_number, &trampoline, had_stand_in ? nullptr : &previous);
    if (result == 0) {
      d.stand_in.store(false, std::memory_order_release);
    } else {
      d.one_shot.store(false, std::memory_order_release);
      if (had_stand_in) d.program = previous;  // the kernel kept what it had
    }
  } else if (action) {
    result = real_sigaction()(signal_number, action, had_stand_in ? nullptr : &previous);
    if (result == 0) {
      d.stand_in.store(false, std::memory_order_release);
      d.one_shot.store(false, std::memory_order_release);
    }
  } else if (!had_stand_in) {
    result = real_sigaction()(signal_number, nullptr, &previous);
  }
  if (result == 0 && old_action) *old_action = previous;
  return result;
}

namespace {
// signal() and bsd_signal() in glibc: BSD semantics (SA_RESTART, the handler stays).
sighandler_t set_handler(int signal_number, sighandler_t handler, int flags) {
  struct sigaction action {
  }, previous{};
  action.sa_handler = handler;
  action.sa_flags = flags;
  sigemptyset(&action.sa_mask);
  if (!(flags & SA_NODEFER)) sigaddset(&action.sa_mask, signal_number);
  if (sigaction(signal_number, &action, &previous) != 0) return SIG_ERR;
  return previous.sa_handler;
}
}  // namespace

LOCKSCOPE_EXPORT sighandler_t signal(int signal_number, sighandler_t handler) {
  return set_handler(signal_number, handler, SA_RESTART);
}

LOCKSCOPE_EXPORT sighandler_t bsd_signal(int signal_number, sighandler_t handler) {
  return set_handler(signal_number, handler, SA_RESTART);
}

// System V semantics: the handler is reset on delivery and the signal not blocked inside it.
LOCKSCOPE_EXPORT sighandler_t sysv_signal(int signal_number, sighandler_t handler) {
  return set_handler(signal_number, handler, SA_RESETHAND | SA_NODEFER);
}
