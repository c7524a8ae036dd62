#include "cli/target_launch.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <string_view>
#include <vector>

#include "cli/cli_error.h"
#include "cli/running_descendants.h"
#include "common/runtime_config.h"
#include "common/tsc_calibration.h"

namespace lockscope {

std::string runtime_library_path() {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  const auto library = self.parent_path().parent_path() / "lib" / "liblockscope.so";
  if (error || !std::filesystem::exists(library))
    throw CliError(fmt::format("the runtime library is missing: {}", library.string()),
                   "rebuild (cmake --build build) or reinstall lockscope");
  return library.string();
}

namespace {

// Signals sent to lockscope by another process (`kill -TERM`, a supervisor, a timeout) go on to the
// program, and lockscope keeps waiting for it, as `time` and `perf record` do: the program ends as
// it would have, its profile is written, and lockscope ends with its status. Once the program has
// ended, lockscope waits for the profiled processes it left running (a daemon): a signal then goes
// on to each of them. Signals the terminal sends to the whole foreground group (Ctrl-C, Ctrl-\,
// hang-up) reached the program already.
constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
constexpr size_t kForwardedCount = std::size(kForwardedSignals);
volatile sig_atomic_t g_target_pid = 0;  // the program, until it has ended
// For the descendants: the handler only notes the signal and its sender; the wait loop, which
// knows who the descendants are, sends it.
volatile sig_atomic_t g_pending[kForwardedCount] = {};
volatile sig_atomic_t g_pending_sender[kForwardedCount] = {};

void forward_signal(int signal_number, siginfo_t* info, void*) {
  const bool sent_by_a_process = info->si_code == SI_USER || info->si_code == SI_QUEUE;
  const pid_t target = g_target_pid;
  if (!sent_by_a_process || (target > 0 && info->si_pid == target)) return;
  const int saved_errno = errno;
  bool for_descendants = target <= 0;
  if (target > 0) {
    kill(target, signal_number);
    // A program that has just ended, not yet collected (a zombie), cannot take it: its
    // descendants will. (waitid is a plain system call: safe in a handler.)
    siginfo_t ended{};
    for_descendants =
        waitid(P_PID, static_cast<id_t>(target), &ended, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        ended.si_pid == target;
  }
  errno = saved_errno;
  if (!for_descendants) return;
  for (size_t i = 0; i < kForwardedCount; ++i) {
    if (kForwardedSignals[i] != signal_number) continue;
    g_pending_sender[i] = info->si_pid;
    g_pending[i] = 1;
  }
}

// Waits, without being their parent, for the profiled processes that outlive the program (a
// forked child, a daemon that double-forks): their running markers say which are still to write
// their profile (running_descendants.h). Polled: they are nobody's children we could wait for.
void wait_for_descendants(const std::string& directory, pid_t program) {
  constexpr timespec kPollInterval{0, 20 * 1000 * 1000};
  for (;;) {
    const std::vector<pid_t> running = running_descendants(directory);
    if (running.empty()) return;
    for (size_t i = 0; i < kForwardedCount; ++i) {
      if (!g_pending[i]) continue;
      g_pending[i] = 0;
      const pid_t sender = g_pending_sender[i];
      // One of the program's own processes signalling a process group we share (kill(0, ...))
      // reached the others already: do not send it back to them.
      const bool from_the_program =
          sender == program || std::find(running.begin(), running.end(), sender) != running.end();
      if (!from_the_program)
        for (const pid_t pid : running) kill(pid, kForwardedSignals[i]);
    }
    nanosleep(&kPollInterval, nullptr);  // a signal cuts it short: forwarded at once
  }
}

// The program's environment: lockscope's own, with LD_PRELOAD and the runtime's configuration set.
class ProgramEnvironment {
 public:
  ProgramEnvironment(const std::string& preload, const std::string& config_text) {
    const std::string preload_entry = "LD_PRELOAD=";
    const std::string config_entry = std::string(config::kVariable) + "=";
    // In place when there (as setenv replaces), else at the end.
    bool preload_set = false, config_set = false;
    for (char** entry = environ; *entry != nullptr; ++entry) {
      const std::string_view text(*entry);
      if (text.starts_with(preload_entry)) {
        if (!preload_set) entries_.push_back(preload_entry + preload);
        preload_set = true;
      } else if (text.starts_with(config_entry)) {
        if (!config_set) entries_.push_back(config_entry + config_text);
        config_set = true;
      } else {
        entries_.emplace_back(text);
      }
    }
    if (!preload_set) entries_.push_back(preload_entry + preload);
    if (!config_set) entries_.push_back(config_entry + config_text);
    for (std::string& entry : entries_) pointers_.push_back(entry.data());
    pointers_.push_back(nullptr);
  }
  char* const* pointers() const { return pointers_.data(); }

 private:
  std::vector<std::string> entries_;
  std::vector<char*> pointers_;
};

}  // namespace

TargetOutcome launch_target(const LaunchSettings& settings) {
  std::string preload = settings.runtime_library;
  if (const char* existing = std::getenv("LD_PRELOAD"); existing && *existing)
    preload += std::string(":") + existing;
  const uint64_t tsc_hz = tsc_is_invariant() ? measure_tsc_hz(5000000) : 0;
  const std::string directory = std::filesystem::absolute(settings.profile_directory).string();
  std::string config_text;  // runtime_config.h: `key=value,...,dir=PATH`, dir last
  auto add = [&config_text](const char* key, const auto& value) {
    config_text += fmt::format("{}={},", key, value);
  };
  add(config::kHoldSampleKey, settings.hold_sample_period);
  add(config::kSnapshotKey, settings.snapshot_interval_ms);
  add(config::kStackDepthKey, settings.stack_depth);
  add(config::kUnwindKey, settings.unwind);
  if (settings.all_stacks) add(config::kStacksKey, config::kStacksAll);
  if (settings.trace) {
    add(config::kTraceKey, 1);
    add(config::kTraceSizeKey, settings.trace_size);
    add(config::kTraceRingKey, settings.trace_ring ? 1 : 0);
    add(config::kMinWaitKey, settings.min_wait_ns);
  }
  add(config::kTscHzKey, tsc_hz);
  config_text += fmt::format("{}={}", config::kDirectoryKey, directory);
  std::vector<char*> argv;
  for (const std::string& argument : settings.arguments)
    argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);

  struct sigaction forward {
  }, old_actions[kForwardedCount]{};
  forward.sa_sigaction = forward_signal;
  forward.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&forward.sa_mask);
  for (size_t i = 0; i < kForwardedCount; ++i) {
    sigaction(kForwardedSignals[i], nullptr, &old_actions[i]);
    // Caught even when lockscope was started ignoring it (a shell script's `cmd &` ignores SIGINT
    // and SIGQUIT, nohup SIGHUP): one sent to lockscope is one sent to the program, which
    // starts with the dispositions lockscope was given (the child restores them) and may have a
    // handler of its own. The terminal's own (hang-up, Ctrl-C) come from the kernel, never
    // forwarded.
    sigaction(kForwardedSignals[i], &forward, nullptr);
  }
  // fork, not posix_spawn: glibc's posix_spawn starts the program with its two internal signals
  // (32, 33) ignored, which an exec keeps. exec's error comes back through a close-on-exec pipe
  // (nothing: the program runs), so that a program that could not be run is said once, by us.
  const ProgramEnvironment environment(preload, config_text);
  int exec_error_pipe[2];
  if (pipe2(exec_error_pipe, O_CLOEXEC) != 0)
    throw CliError(fmt::format("cannot start the program: pipe: {}", std::strerror(errno)));
  // No PR_SET_CHILD_SUBREAPER: a daemon the program starts must see the parent it would have
  // without lockscope (init, or the nearest subreaper above us); markers tell us whom to wait for.
  const pid_t child = fork();
  if (child < 0) {
    const int error = errno;
    close(exec_error_pipe[0]);
    close(exec_error_pipe[1]);
    throw CliError(fmt::format("cannot start the program: fork: {}", std::strerror(error)));
  }
  if (child == 0) {
    for (size_t i = 0; i < kForwardedCount; ++i)
      sigaction(kForwardedSignals[i], &old_actions[i], nullptr);
    execve(settings.executable.c_str(), argv.data(), environment.pointers());
    const int error = errno;
    while (write(exec_error_pipe[1], &error, sizeof(error)) < 0 && errno == EINTR) {
    }
    _exit(error == ENOENT ? kExitNotFound : kExitNotRunnable);
  }
  g_target_pid = child;
  close(exec_error_pipe[1]);
  int exec_error = 0;
  ssize_t got;
  while ((got = read(exec_error_pipe[0], &exec_error, sizeof(exec_error))) < 0 && errno == EINTR) {
  }
  close(exec_error_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof(exec_error))) {
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    g_target_pid = 0;
    for (size_t i = 0; i < kForwardedCount; ++i)
      sigaction(kForwardedSignals[i], &old_actions[i], nullptr);
    fmt::print(stderr, "lockscope: error: cannot run '{}': {}\n", settings.executable,
               std::strerror(exec_error));
    TargetOutcome outcome;
    outcome.exit_status = exec_error == ENOENT ? kExitNotFound : kExitNotRunnable;
    outcome.not_started = true;
    return outcome;
  }
  // Until the program is collected its pid cannot be reused: a signal forwarded meanwhile reaches
  // it, or, once it is a zombie, is noted for the descendants (forward_signal).
  siginfo_t ended{};
  while (waitid(P_PID, static_cast<id_t>(child), &ended, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  g_target_pid = 0;
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  // Descendants that outlive the program (a forked child, a daemon) write their profiles later.
  wait_for_descendants(directory, child);
  for (size_t i = 0; i < kForwardedCount; ++i)
    sigaction(kForwardedSignals[i], &old_actions[i], nullptr);
  TargetOutcome outcome;
  if (WIFSIGNALED(status)) {
    outcome.signaled = true;
    outcome.signal = WTERMSIG(status);
  } else {
    outcome.exit_status = WEXITSTATUS(status);
  }
  return outcome;
}

void exit_like(const TargetOutcome& outcome) {
  std::fflush(stdout);
  std::fflush(stderr);
  if (outcome.signaled) {
    // Re-raise without a core dump of lockscope itself.
    struct rlimit no_core {
      0, 0
    };
    setrlimit(RLIMIT_CORE, &no_core);
    signal(outcome.signal, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, outcome.signal);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    raise(outcome.signal);
    std::_Exit(128 + outcome.signal);
  }
  std::exit(outcome.exit_status);
}

}  // namespace lockscope
