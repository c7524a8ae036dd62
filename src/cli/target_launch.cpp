#include "cli/target_launch.h"

#include <fmt/core.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>

#include "cli/cli_error.h"
#include "common/config_string.h"
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
// it would have, its profile is written, and lockscope ends with its status. Signals the terminal
// sends to the whole foreground group (Ctrl-C, Ctrl-\, hang-up) reached the program already.
constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
volatile sig_atomic_t g_target_pid = 0;

void forward_to_target(int signal_number, siginfo_t* info, void*) {
  const bool sent_by_a_process = info->si_code == SI_USER || info->si_code == SI_QUEUE;
  if (g_target_pid > 0 && sent_by_a_process && info->si_pid != g_target_pid)
    kill(g_target_pid, signal_number);
}

}  // namespace

TargetOutcome launch_target(const LaunchSettings& settings) {
  std::string preload = settings.runtime_library;
  if (const char* existing = std::getenv("LD_PRELOAD"); existing && *existing)
    preload += std::string(":") + existing;
  const uint64_t tsc_hz = tsc_is_invariant() ? measure_tsc_hz(5000000) : 0;
  const std::string config = fmt::format("hold_sample={},snapshot_ms={},tsc_hz={},dir={}",
                                         settings.hold_sample_period,
                                         static_cast<uint64_t>(settings.snapshot_interval_s * 1000),
                                         tsc_hz,
                                         std::filesystem::absolute(settings.profile_directory)
                                             .string());
  std::vector<char*> argv;
  for (const std::string& argument : settings.arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);

  struct sigaction forward {}, old_actions[std::size(kForwardedSignals)] {};
  forward.sa_sigaction = forward_to_target;
  forward.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&forward.sa_mask);
  for (size_t i = 0; i < std::size(kForwardedSignals); ++i) {
    sigaction(kForwardedSignals[i], nullptr, &old_actions[i]);
    // A signal lockscope was started ignoring (nohup) stays ignored, for it and for the program.
    if (old_actions[i].sa_handler != SIG_IGN) sigaction(kForwardedSignals[i], &forward, nullptr);
  }
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  const pid_t child = fork();
  if (child < 0) throw CliError(fmt::format("cannot start the program: fork: {}", std::strerror(errno)));
  if (child == 0) {
    for (size_t i = 0; i < std::size(kForwardedSignals); ++i)
      sigaction(kForwardedSignals[i], &old_actions[i], nullptr);
    setenv("LD_PRELOAD", preload.c_str(), 1);
    setenv(kConfigVariable, config.c_str(), 1);
    execv(settings.executable.c_str(), argv.data());
    const int error = errno;
    fmt::print(stderr, "lockscope: error: cannot run '{}': {}\n", settings.executable,
               std::strerror(error));
    _exit(error == ENOENT ? kExitNotFound : kExitNotRunnable);
  }
  g_target_pid = child;
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  g_target_pid = 0;
  // Descendants orphaned by the target (a forked child outliving its parent) were re-parented to
  // us (subreaper): wait for them too, or their profiles would be missing from the report.
  while (waitpid(-1, nullptr, 0) > 0 || errno == EINTR) {
  }
  for (size_t i = 0; i < std::size(kForwardedSignals); ++i)
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
    struct rlimit no_core {0, 0};
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
