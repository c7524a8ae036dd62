#include "cli/repeated_runs.h"

#include <fmt/core.h>
#include <string.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "analysis/duration_format.h"
#include "cli/profile_directory.h"

namespace lockscope {
namespace {

std::string end_text(const TargetOutcome& outcome) {
  if (outcome.signaled) {
    const char* name = sigabbrev_np(outcome.signal);
    return name ? fmt::format("signal SIG{}", name) : fmt::format("signal {}", outcome.signal);
  }
  return fmt::format("exit status {}", outcome.exit_status);
}

bool failed(const TargetOutcome& outcome) {
  return outcome.not_started || outcome.signaled || outcome.exit_status != 0;
}

// "1" or "1–3": the runs kept.
std::string runs_text(unsigned runs) {
  return runs == 1 ? "run 1" : fmt::format("runs 1–{}", runs);
}

// The progress of the set on stderr: rewritten in place on a terminal (erased when the set
// ends), else a line per run for a log.
class RunProgress {
 public:
  explicit RunProgress(unsigned runs) : runs_(runs), terminal_(isatty(STDERR_FILENO) != 0) {}

  void starting(unsigned run) {
    started_ = std::chrono::steady_clock::now();
    if (!terminal_) return;
    const std::string last =
        run > 1 ? fmt::format(" (run {}: {})", run - 1, format_duration_ns(last_ns_)) : "";
    fmt::print(stderr, "\r\033[Klockscope: run {}/{} …{}", run, runs_, last);
    std::fflush(stderr);
  }

  void ended(unsigned run, const TargetOutcome& outcome) {
    last_ns_ = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                       std::chrono::steady_clock::now() - started_)
                                       .count());
    if (!terminal_ && !outcome.not_started)
      fmt::print(stderr, "lockscope: run {}/{}: {} in {}\n", run, runs_, end_text(outcome),
                 format_duration_ns(last_ns_));
  }

  // Before any other line of lockscope's own.
  void clear() {
    if (terminal_) fmt::print(stderr, "\r\033[K");
    std::fflush(stderr);
  }

 private:
  unsigned runs_;
  bool terminal_;
  std::chrono::steady_clock::time_point started_{};
  double last_ns_ = 0;
};

}  // namespace

TargetOutcome record_one_run(const LaunchSettings& launch) {
  const ProfileDirectoryAccess access = prepare_profile_directory(launch.profile_directory);
  struct Restore {  // also when the launch throws
    const std::string& directory;
    const ProfileDirectoryAccess& access;
    ~Restore() { restore_profile_directory(directory, access); }
  } restore{launch.profile_directory, access};
  return launch_target(launch);
}

RunSetOutcome record_run_set(const LaunchSettings& launch, unsigned runs,
                             const MissingProfileCheck& missing_profile) {
  const std::string& directory = launch.profile_directory;
  // The set's directory: a previous profile or set moved away, and checked writable, before the
  // first run; its own access restored once the set is done.
  const ProfileDirectoryAccess access = prepare_profile_directory(directory);
  struct Restore {
    const std::string& directory;
    const ProfileDirectoryAccess& access;
    ~Restore() { restore_profile_directory(directory, access); }
  } restore{directory, access};

  RunSetOutcome set;
  RunProgress progress(runs);
  for (unsigned run = 1; run <= runs; ++run) {
    LaunchSettings one = launch;
    one.profile_directory = fmt::format("{}/{}", directory, run);
    progress.starting(run);
    set.last = record_one_run(one);
    progress.ended(run, set.last);
    if (set.last.not_started) {  // said by the launch; no profile to keep
      progress.clear();
      std::error_code ignored;
      std::filesystem::remove(one.profile_directory, ignored);  // only when empty
      set.stopped = true;
      return set;
    }
    if (const std::optional<std::string> why = missing_profile(one.profile_directory, set.last)) {
      progress.clear();
      std::error_code ignored;
      std::filesystem::remove(one.profile_directory, ignored);  // only when empty
      fmt::print(stderr, "lockscope: warning: run {}/{}: {}\n", run, runs, *why);
      if (run < runs)
        fmt::print(stderr, "lockscope: the set stops at run {}/{}{}\n", run, runs,
                   set.runs_kept
                       ? fmt::format(" ({} kept in {}/)", runs_text(set.runs_kept), directory)
                       : "");
      set.stopped = run < runs;
      return set;
    }
    set.runs_kept = run;
    if (failed(set.last) && run < runs) {
      progress.clear();
      fmt::print(stderr,
                 "lockscope: run {}/{} ended with {}: the set stops there ({} kept in {}/)\n", run,
                 runs, end_text(set.last), runs_text(set.runs_kept), directory);
      set.stopped = true;
      return set;
    }
  }
  progress.clear();
  return set;
}

}  // namespace lockscope
