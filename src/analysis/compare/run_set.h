// A repeated set of runs on disk, as `record --repeat N` writes it: DIR/1 … DIR/N, each an
// ordinary profile directory. Whatever reads runs (`report` of a set, `diff`) takes a path that is
// either such a set or a plain profile directory (a set of one run), and gets the runs in order.
//
// A set is recognised by its numbered subdirectories ("1", "2", …: decimal, no leading zero), in
// a directory without profile files of its own; a run whose program was killed may have left its
// directory empty, and it still counts as a run of the set (reading it says what is wrong).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "analysis/profile_model.h"

namespace lockscope {
class Symbolizer;
}

namespace lockscope::compare {

// The most runs a set holds (record --repeat's limit): a larger number in a directory's name is
// not a run's.
inline constexpr std::size_t kMaxRuns = 1000;

// `directory` holds no profile file of its own and at least one numbered subdirectory.
bool is_run_set(const std::string& directory);

// The run directories of `path`: `path` itself when it holds profile files (*.lsprof), else its
// numbered subdirectories 1 … N in numeric order. Throws std::runtime_error with a one-line
// message when it is neither, cannot be listed, or a number between 1 and the highest is missing.
std::vector<std::string> run_directories(const std::string& path);

// Reading a set: `run` (0-based) of `runs` is being symbolized, `done` of `total` code locations.
using RunSetProgress =
    std::function<void(std::size_t run, std::size_t runs, std::size_t done, std::size_t total)>;

struct RunSetProfiles {
  std::vector<std::string> directories;  // as run_directories() gave them
  std::vector<Profile> profiles;         // read, symbolized and repaired, one per directory
};

// Reads every run of `path` (run_directories) and symbolizes it, all runs through one Symbolizer:
// runs of one program name the same modules, and opening a module and indexing its DWARF is most
// of symbolization's work, so the second run onwards costs only its lookups. Damaged files stay
// in each profile's `problems`. Throws std::runtime_error (one line, naming the run's directory)
// when a run cannot be listed or has no readable profile: a set with a hole is not a sample.
RunSetProfiles read_run_set(const std::string& path, const RunSetProgress& progress = {});

}  // namespace lockscope::compare
