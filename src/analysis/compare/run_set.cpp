#include "analysis/compare/run_set.h"

#include <fmt/core.h>

#include <filesystem>
#include <map>
#include <stdexcept>

#include "analysis/profile_reader.h"
#include "analysis/profile_symbolization.h"
#include "analysis/symbolizer.h"
#include "analysis/utf8_repair.h"
#include "common/profile_format.h"

namespace lockscope::compare {
namespace fs = std::filesystem;

namespace {

// The run number a subdirectory's name is ("7"), or 0 when it is not one ("07", "x", "1001").
std::size_t run_number(const std::string& name) {
  if (name.empty() || name.size() > 4 || name[0] == '0') return 0;
  std::size_t number = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return 0;
    number = number * 10 + static_cast<std::size_t>(c - '0');
  }
  return number <= kMaxRuns ? number : 0;
}

struct Listing {
  bool has_profiles = false;
  std::map<std::size_t, std::string> runs;  // number -> directory
};

Listing list(const std::string& directory) {
  Listing listing;
  std::error_code error;
  fs::directory_iterator entries(directory, error);
  if (error)
    throw std::runtime_error(fmt::format("cannot read '{}': {}", directory, error.message()));
  for (const fs::directory_entry& entry : entries) {
    if (entry.path().extension() == format::kFileSuffix) listing.has_profiles = true;
    std::error_code kind_error;
    if (!entry.is_directory(kind_error)) continue;
    if (const std::size_t number = run_number(entry.path().filename().string()))
      listing.runs[number] = entry.path().string();
  }
  return listing;
}

}  // namespace

bool is_run_set(const std::string& directory) {
  try {
    const Listing listing = list(directory);
    return !listing.has_profiles && !listing.runs.empty();
  } catch (const std::runtime_error&) {
    return false;
  }
}

std::vector<std::string> run_directories(const std::string& path) {
  const Listing listing = list(path);
  if (listing.has_profiles) return {path};
  if (listing.runs.empty())
    throw std::runtime_error(
        fmt::format("'{}' is neither a profile directory (no *{} file) nor a set of runs "
                    "(no subdirectory 1, 2, …)",
                    path, format::kFileSuffix));
  std::vector<std::string> directories;
  for (const auto& [number, directory] : listing.runs) {
    if (number != directories.size() + 1)
      throw std::runtime_error(
          fmt::format("'{}' is a set of runs with run {} missing (it has {} to {}, {} of them)",
                      path, directories.size() + 1, listing.runs.begin()->first,
                      listing.runs.rbegin()->first, listing.runs.size()));
    directories.push_back(directory);
  }
  return directories;
}

RunSetProfiles read_run_set(const std::string& path, const RunSetProgress& progress) {
  RunSetProfiles set;
  set.directories = run_directories(path);
  Symbolizer symbolizer;  // shared by the runs: each module opened and indexed once
  for (std::size_t run = 0; run < set.directories.size(); ++run) {
    const std::string& directory = set.directories[run];
    Profile profile = read_profile_directory(directory);
    if (profile.processes.empty()) {
      const std::string why = profile.problems.empty()
                                  ? fmt::format("no *{} file", format::kFileSuffix)
                                  : fmt::format("{}: {}", profile.problems.front().file,
                                                profile.problems.front().message);
      throw std::runtime_error(fmt::format("no readable profile in run {} of {} ('{}'): {}",
                                           run + 1, set.directories.size(), directory, why));
    }
    SymbolizeProgress run_progress;
    if (progress)
      run_progress = [&, run](std::size_t done, std::size_t total) {
        progress(run, set.directories.size(), done, total);
      };
    symbolize_profile(profile, symbolizer, run_progress);
    repair_profile_strings(profile);
    set.profiles.push_back(std::move(profile));
  }
  return set;
}

}  // namespace lockscope::compare
