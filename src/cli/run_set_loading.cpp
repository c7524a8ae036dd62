#include "cli/run_set_loading.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "analysis/compare/run_set.h"
#include "cli/cli_error.h"
#include "common/trace_format.h"

namespace lockscope {
namespace {

constexpr const char* kHint =
    "give a directory written by `lockscope record -o DIR` (with --repeat N: a set of runs, "
    "DIR/1 … DIR/N)";

// On a terminal, a progress line while the runs are read and symbolized (stderr, which the
// report never is unless asked; erased when done): a set of large profiles takes a while.
compare::RunSetProgress reading_progress() {
  if (!isatty(STDERR_FILENO)) return {};
  return [](std::size_t run, std::size_t runs, std::size_t done, std::size_t total) {
    if (done < total && runs > 1)
      fmt::print(stderr, "\r\033[Klockscope: reading run {} of {}: {} of {} code locations",
                 run + 1, runs, done, total);
    else if (done < total)
      fmt::print(stderr, "\r\033[Klockscope: symbolizing {} of {} code locations", done, total);
    else
      fmt::print(stderr, "\r\033[K");
    std::fflush(stderr);
  };
}

}  // namespace

std::vector<const Profile*> LoadedRuns::pointers() const {
  std::vector<const Profile*> out;
  for (const Profile& run : runs) out.push_back(&run);
  return out;
}

std::vector<std::string> run_directories(const std::string& path) {
  try {
    return compare::run_directories(path);
  } catch (const std::runtime_error& error) {
    throw CliError(error.what(), kHint);
  }
}

LoadedRuns load_runs(const std::string& path) {
  // On a terminal, libdw's debuginfod client shows the progress of its downloads (unless the
  // user set DEBUGINFOD_PROGRESS already).
  if (isatty(STDERR_FILENO)) setenv("DEBUGINFOD_PROGRESS", "1", /*overwrite=*/0);
  compare::RunSetProfiles set;
  try {
    set = compare::read_run_set(path, reading_progress());
  } catch (const std::runtime_error& error) {
    throw CliError(error.what(), kHint);
  }
  // A damaged file leaves its process out of its run, as a single run's report says.
  for (std::size_t run = 0; run < set.profiles.size(); ++run)
    for (const ProfileProblem& problem : set.profiles[run].problems)
      fmt::print(stderr, "lockscope: warning: {}{}: {} ({})\n",
                 set.profiles.size() > 1 ? fmt::format("run {}: ", run + 1) : "", problem.file,
                 problem.message,
                 problem.file.ends_with(format::kTraceSuffix) ? "its events are left out"
                                                              : "its process is left out");
  return LoadedRuns{std::move(set.profiles)};
}

}  // namespace lockscope
