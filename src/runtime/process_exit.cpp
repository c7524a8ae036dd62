// Where a process's profile gets written: normal exit (see remember_exit_status and
// lockscope_finish), _exit / _Exit (interposed: no destructors run), and exec (interposed: the
// image is about to vanish; the file is removed again if exec fails, so nothing is counted twice).
// vfork children share our memory and are not this process: they are recognised by their pid and
// never write.
#include "runtime/process_exit.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "runtime/cancellation.h"
#include "runtime/errno_guard.h"
#include "runtime/exec_verdict.h"
#include "runtime/interpose.h"
#include "runtime/profile_writer.h"
#include "runtime/raw_log.h"
#include "runtime/real_functions.h"
#include "runtime/recorder.h"
#include "runtime/running_marker.h"
#include "runtime/runtime_state.h"
#include "runtime/signals_blocked.h"
#include "runtime/stack_capture.h"
#include "runtime/thread_lifecycle.h"
#include "runtime/trace_files.h"

using lockscope::format::ExitPath;
using lockscope::runtime::real;
using lockscope::runtime::runtime;
using lockscope::runtime::SignalsBlocked;

extern char** environ;

namespace {

bool is_profiled_process() {
  auto& rt = runtime();
  if (rt.status.load(std::memory_order_acquire) !=
      static_cast<int>(lockscope::runtime::RuntimeStatus::kReady))
    return false;
  const pid_t pid = getpid();
  if (pid < 0) {
    // Refused: a seccomp filter that answers the runtime's system calls with an error (one that
    // kills instead ends the program: docs/runtime.md). Said once, instead of a profile missing
    // without a word.
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
      lockscope::runtime::RawLine()
          .append("profile of pid ")
          .append(rt.pid)
          .append(
              " not written: the system calls it needs are refused (getpid failed: a "
              "seccomp filter?)")
          .emit();
    return false;
  }
  return static_cast<uint32_t>(pid) == rt.pid;
}

// A fatal signal delivered to another thread than the one writing the final profile: it must not
// end the process half-way through the write. It waits for the write (bounded: a server's takes
// ~0.1 s); when the process ends with that write, it then waits for that end, which comes with the
// program's own status, as plain (bounded too: the signal's default action follows otherwise).
// A write that ends the process keeps its writer's tid afterwards: a signal left pending in that
// thread by the write then ends it at once. Between the writer's claim (profile_written) and its
// tid, a few instructions: a writer not yet named is waited for a few milliseconds.
void wait_for_final_write(uint32_t tid) {
  auto& rt = runtime();
  const timespec millisecond{0, 1000000};
  for (int waited = 0; waited < 10000; ++waited) {
    const uint32_t writer = rt.final_writer_tid.load(std::memory_order_acquire);
    if (writer == tid) return;  // this thread's own write: the signal was pending behind it
    if (writer == 0 && !rt.final_write_ends_process.load(std::memory_order_acquire) && waited >= 5)
      return;                                       // none under way (an exec's is done)
    syscall(SYS_nanosleep, &millisecond, nullptr);  // no cancellation point
  }
}

// Writes the profile once per process image; returns true if this call wrote it. Unless the image
// is only being replaced (exec), this is the process's end: its running marker goes (after the
// write, so that a CLI waiting for it finds the file), written or not.
//
// Every catchable signal but the faults is blocked for the write (SignalsBlocked): a signal whose
// default action ends the process, arriving while the profile is written, ended it half-way through
// the write, and the profile was lost (a multiprocessing pool sends SIGTERM to its workers as they
// exit; plain, they are gone before it comes). The mask comes back afterwards: before an exec
// (whose new image inherits it), in a signal handler (where it is full anyway), and at exit(),
// after which other libraries' destructors and stdio's flush still run (a flush into a closed pipe
// must still die of SIGPIPE, a hang there still yield to Ctrl-C); a signal that came meanwhile then
// acts, on a process whose profile is written. Only at _exit does the process end next: the signal
// stays pending and the process ends with its own status, as plain, where it would have come later.
bool write_once(ExitPath path, int status, char* written, bool from_signal = false) {
  if (!is_profiled_process()) return false;
  auto& rt = runtime();
  const SignalsBlocked held(path != ExitPath::kUnderscoreExit || from_signal);
  const auto tid = static_cast<uint32_t>(syscall(SYS_gettid));
  if (rt.profile_written.exchange(true)) {
    if (from_signal) wait_for_final_write(tid);
    return false;
  }
  rt.final_write_ends_process.store(path != ExitPath::kExec, std::memory_order_relaxed);
  rt.final_writer_tid.store(tid, std::memory_order_release);
  if (path == ExitPath::kExec)
    if (auto* self = lockscope::runtime::tls_thread)
      lockscope::runtime::sink().thread_event(*self, lockscope::format::TraceKind::kExec);
  const bool wrote = lockscope::runtime::write_profile(path, status, written, from_signal);
  if (wrote) lockscope::runtime::mark_process_traces_closed(from_signal);
  if (path != ExitPath::kExec)
    lockscope::runtime::finish_running_marker();
  else
    rt.final_writer_tid.store(0, std::memory_order_release);
  return wrote;
}

// Before exec: write (also with nothing recorded when the new image will not be profiled, so the
// report can say so, with the reason judged here and now: the PATH, working directory and user
// are this process's); after a failed exec, take the file back and keep recording.
struct ExecGuard {
  char written[4096];
  bool wrote;
  ExecGuard(const char* target, bool search_path) : wrote(false) {
    if (!is_profiled_process()) return;
    const lockscope::runtime::ErrnoGuard keep_errno;
    auto& rt = runtime();
    lockscope::runtime::ExecVerdict verdict;
    lockscope::runtime::judge_exec(target, search_path, verdict);
    rt.exec_target_size = static_cast<uint32_t>(lockscope::runtime::pack_exec_target(
        target, verdict, rt.exec_target, sizeof(rt.exec_target)));
    // A process that gave up root has its profile file open already (interpose_credentials.cpp):
    // left empty, it would read as a process killed before its end.
    if (lockscope::runtime::has_recorded_events() || verdict.reason[0] || rt.kept_profile_fd >= 0)
      wrote = write_once(ExitPath::kExec, -1, written);
    rt.exec_target_size = 0;
  }
  int failed(int result) {
    const lockscope::runtime::ErrnoGuard keep_errno;  // the failed exec's
    if (wrote) unlink(written);
    if (wrote || is_profiled_process()) {
      runtime().final_write_ends_process.store(false, std::memory_order_relaxed);
      runtime().profile_written.store(false);
    }
    return result;
  }
};

size_t count_variadic(const char* first, va_list args) {
  size_t n = first ? 1 : 0;
  if (!first) return 0;
  while (va_arg(args, const char*)) ++n;
  return n;
}

}  // namespace

void lockscope::runtime::write_profile_on_signal(int signal_number) {
  char written[4096];
  write_once(ExitPath::kSignal, signal_number, written, true);
}

void lockscope::runtime::write_profile_snapshot() {
  if (!is_profiled_process() || runtime().profile_written.load(std::memory_order_acquire)) return;
  char written[4096];
  const SignalsBlocked held;  // a handler neither ends the process nor stalls it half-way
  lockscope::runtime::write_profile(ExitPath::kSnapshot, -1, written);
}

// quick_exit(): the program's at_quick_exit handlers run first (ours was registered before any of
// theirs, and they run in reverse order), then ours writes with the status remembered here.
static int g_quick_exit_status = -1;
void lockscope::runtime::write_profile_at_quick_exit() {
  char written[4096];
  write_once(ExitPath::kQuickExit, g_quick_exit_status, written);
}

LOCKSCOPE_EXPORT void quick_exit(int status) {
  using QuickExit = void (*)(int);
  static QuickExit real_quick_exit = reinterpret_cast<QuickExit>(dlsym(RTLD_NEXT, "quick_exit"));
  g_quick_exit_status = status;
  real_quick_exit(status);
  __builtin_unreachable();
}

__attribute__((destructor)) static void lockscope_finish() {
  char written[4096];
  write_once(ExitPath::kExit, runtime().exit_status, written);
}

LOCKSCOPE_EXPORT void _exit(int status) {
  char written[4096];
  write_once(ExitPath::kUnderscoreExit, status, written);
  if (!real().underscore_exit) lockscope::runtime::resolve_real_functions();
  real().underscore_exit(status);
  __builtin_unreachable();
}

LOCKSCOPE_EXPORT void _Exit(int status) {
  char written[4096];
  write_once(ExitPath::kUnderscoreExit, status, written);
  if (!real().underscore_capital_exit) lockscope::runtime::resolve_real_functions();
  real().underscore_capital_exit(status);
  __builtin_unreachable();
}

LOCKSCOPE_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  if (!real().execve) lockscope::runtime::resolve_real_functions();
  ExecGuard guard(path, false);
  return guard.failed(real().execve(path, argv, envp));
}

LOCKSCOPE_EXPORT int execv(const char* path, char* const argv[]) {
  return execve(path, argv, environ);
}

LOCKSCOPE_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  if (!real().execvpe) lockscope::runtime::resolve_real_functions();
  ExecGuard guard(file, true);
  return guard.failed(real().execvpe(file, argv, envp));
}

LOCKSCOPE_EXPORT int execvp(const char* file, char* const argv[]) {
  return execvpe(file, argv, environ);
}

LOCKSCOPE_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
  if (!real().fexecve) lockscope::runtime::resolve_real_functions();
  ExecGuard guard(nullptr, false);
  return guard.failed(real().fexecve(fd, argv, envp));
}

// The list forms gather their arguments on the stack (no malloc) and reuse the vector forms.
#define GATHER_ARGUMENTS(first, extra_after_null)                                   \
  va_list count_args;                                                               \
  va_start(count_args, first);                                                      \
  const size_t count = count_variadic(first, count_args);                           \
  va_end(count_args);                                                               \
  char** argv = static_cast<char**>(__builtin_alloca((count + 1) * sizeof(char*))); \
  va_list args;                                                                     \
  va_start(args, first);                                                            \
  argv[0] = const_cast<char*>(first);                                               \
  for (size_t i = 1; i < count; ++i) argv[i] = va_arg(args, char*);                 \
  if (count) (void)va_arg(args, char*);                                             \
  argv[count] = nullptr;                                                            \
  extra_after_null;                                                                 \
  va_end(args)

LOCKSCOPE_EXPORT int execl(const char* path, const char* arg, ...) {
  GATHER_ARGUMENTS(arg, (void)0);
  return execve(path, argv, environ);
}

LOCKSCOPE_EXPORT int execlp(const char* file, const char* arg, ...) {
  GATHER_ARGUMENTS(arg, (void)0);
  return execvpe(file, argv, environ);
}

LOCKSCOPE_EXPORT int execle(const char* path, const char* arg, ...) {
  char* const* envp;
  GATHER_ARGUMENTS(arg, envp = va_arg(args, char* const*));
  return execve(path, argv, envp);
}
