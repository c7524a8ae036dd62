#include "cli/run_set_loading.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "cli/cli_error.h"
#include "cli/report_settings.h"

namespace lockscope {

std::vector<const Profile*> LoadedRuns::pointers() const {
  std::vector<const Profile*> out;
  for (const Profile& run : runs) out.push_back(&run);
  return out;
}

std::vector<std::string> run_directories(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::is_directory(path, error))
    throw CliError(fmt::format("'{}' is not a profile directory nor a set of runs", path),
                   "give a directory written by `lockscope record -o DIR` (with --repeat N: a "
                   "set of runs)");
  std::set<unsigned> numbers;
  for (const auto& entry : fs::directory_iterator(path, error)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || name.empty() || name.size() > 6 ||
        !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    numbers.insert(static_cast<unsigned>(std::stoul(name)));
  }
  if (numbers.empty()) return {path};
  std::vector<std::string> runs;
  for (unsigned expected = 1; expected <= *numbers.rbegin(); ++expected) {
    if (!numbers.count(expected))
      throw CliError(fmt::format("the set of runs '{}' has no run {} (it has runs up to {})", path,
                                 expected, *numbers.rbegin()),
                     "a set holds runs 1 … N, as record --repeat N writes them");
    runs.push_back((fs::path(path) / std::to_string(expected)).string());
  }
  return runs;
}

LoadedRuns load_runs(const std::string& path) {
  LoadedRuns loaded;
  for (const std::string& directory : run_directories(path))
    loaded.runs.push_back(read_symbolized_profile(directory));
  return loaded;
}

}  // namespace lockscope
