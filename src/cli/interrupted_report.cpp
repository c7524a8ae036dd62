#include "cli/interrupted_report.h"

#include <fmt/core.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace lockscope {
namespace {

// What the handler needs, made before it is installed: it may only call async-signal-safe
// functions, so the line is formatted in advance and the outcome kept as plain integers.
char g_line[4096];
size_t g_line_size = 0;
volatile sig_atomic_t g_target_signal = 0;  // the program's signal, or 0 when it exited
volatile sig_atomic_t g_target_status = 0;  // its exit status when it exited

void end_with_note(int) {
  for (size_t written = 0; written < g_line_size;) {
    const ssize_t n = write(STDERR_FILENO, g_line + written, g_line_size - written);
    if (n > 0)
      written += static_cast<size_t>(n);
    else if (n < 0 && errno != EINTR)
      break;  // a terminal that hung up: the status still says how the program ended
  }
  const int target_signal = g_target_signal;
  if (target_signal != 0) {
    // As exit_like(): re-raised without a core dump of lockscope itself, and unblocked (it is
    // blocked here when it is the signal being handled).
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigaction(target_signal, &default_action, nullptr);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, target_signal);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    raise(target_signal);
    _exit(128 + target_signal);  // a signal whose default is to be ignored (SIGCHLD)
  }
  _exit(g_target_status);
}

}  // namespace

InterruptedReportNote::InterruptedReportNote(const std::string& directory,
                                             const TargetOutcome& outcome) {
  // On a terminal the line starts a line of its own, after the echoed ^C or the symbolization's
  // progress line (not erased: it may be a line of the report, cut short).
  const std::string line =
      fmt::format("{}lockscope: interrupted; the profile is in {}: lockscope report {}\n",
                  isatty(STDERR_FILENO) ? "\n" : "", directory, directory);
  g_line_size = std::min(line.size(), sizeof(g_line));
  std::memcpy(g_line, line.data(), g_line_size);
  g_target_signal = outcome.signaled ? outcome.signal : 0;
  g_target_status = outcome.signaled ? 0 : outcome.exit_status;
  struct sigaction note {};
  note.sa_handler = end_with_note;
  sigfillset(&note.sa_mask);  // one note, whichever signals come together
  for (size_t i = 0; i < std::size(kSignals); ++i) {
    if (sigaction(kSignals[i], nullptr, &previous_[i]) != 0 || previous_[i].sa_handler == SIG_IGN)
      continue;
    installed_[i] = sigaction(kSignals[i], &note, nullptr) == 0;
  }
}

InterruptedReportNote::~InterruptedReportNote() {
  for (size_t i = 0; i < std::size(kSignals); ++i)
    if (installed_[i]) sigaction(kSignals[i], &previous_[i], nullptr);
}

}  // namespace lockscope
