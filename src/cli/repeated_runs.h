// `record --repeat N` and `run --repeat N`: the program run N times in a row, each run into its own
// profile directory DIR/1 … DIR/N (analysis/compare/run_set.h reads them back as a set).
//
// DIR as a whole is prepared as a single run's directory is (profile_directory.h: a previous
// profile or set of runs there moves to DIR.old, whole), and each run's directory gets the same
// preparation and restoration as a single run's.
//
// A run that fails ends the set there, as a benchmark tool treats a failing run as an error (a
// failed run's figures are not a sample of the same experiment): the program could not be started
// (said, 126/127), ended with a non-zero status or a signal (its profile is kept), or left no
// profile (its empty directory is removed, so that what was recorded still reads as a set). Runs
// that ended before stay.
//
// Progress goes to stderr: on a terminal one line "lockscope: run 3/10 …" rewritten in place; else
// (a CI log) one short line when each run ends.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "cli/target_launch.h"

namespace lockscope {

// The most runs of one set (record --repeat's limit).
inline constexpr unsigned kMaxRepeat = 1000;

// One run into launch.profile_directory: prepared, the program run, its access restored.
TargetOutcome record_one_run(const LaunchSettings& launch);

// Why a run left no profile in its directory, or nullopt when it left one.
using MissingProfileCheck =
    std::function<std::optional<std::string>(const std::string& directory, const TargetOutcome&)>;

struct RunSetOutcome {
  TargetOutcome last;      // the last run's end: lockscope's exit status
  unsigned runs_kept = 0;  // run directories 1 … runs_kept hold a profile
  bool stopped = false;    // the set ended before its N runs (said on stderr)
};

// Runs the program `runs` times into launch.profile_directory/1 … /runs. Throws CliError when
// the directory cannot be prepared.
RunSetOutcome record_run_set(const LaunchSettings& launch, unsigned runs,
                             const MissingProfileCheck& missing_profile);

}  // namespace lockscope
