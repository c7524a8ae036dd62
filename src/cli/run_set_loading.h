// A set of runs as the CLI reads it: a profile directory (one run), or a directory of numbered
// run directories 1 … N (record --repeat N), each read and symbolized (analysis/compare/run_set.h,
// all runs through one Symbolizer), with a progress line on a terminal and a warning for each
// damaged file.
#pragma once

#include <string>
#include <vector>

#include "analysis/profile_model.h"

namespace lockscope {

struct LoadedRuns {
  std::vector<Profile> runs;
  std::vector<const Profile*> pointers() const;
};

// The run directories of `path`, in order: `path` itself when it holds profile files, else
// DIR/1 … DIR/N. Throws CliError when it is neither, or a number is missing (1 and 3 but no 2).
std::vector<std::string> run_directories(const std::string& path);
// Reads and symbolizes every run of `path`. Throws CliError.
LoadedRuns load_runs(const std::string& path);

}  // namespace lockscope
