// The figures of a set of runs of one program, matched across runs by what a person calls things,
// never by address: a process by its executable's name (and its place among processes of that
// name), a lock by its name (lock_names.h: symbol, init site, first use), a call site by its
// operation, function and file:line. A rebuilt program moves every address; these stay.
//
// One table serves `report` of a repeated set (median [min–max] over runs) and `diff` (the base
// set's values against the new set's, compare/run_comparison.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/profile_model.h"

namespace lockscope::compare {

enum class Metric : uint8_t {
  kAcquisitions,  // successful acquisitions (or completed waits), SideSummary::acquisitions
  kContended,     // acquisitions that waited
  kWaitNs,        // time waited, added up
  kWaitP99Ns,     // 99th percentile of the contended waits (none: no value in that run)
  kHoldNs,        // time held, added up (an estimate where holds were sampled)
};
inline constexpr std::size_t kMetricCount = 5;
inline constexpr std::array<Metric, kMetricCount> kMetrics = {Metric::kAcquisitions,
                                                              Metric::kContended, Metric::kWaitNs,
                                                              Metric::kWaitP99Ns, Metric::kHoldNs};
// "acquisitions", "contended", "wait", "wait_p99", "hold": the names --fail-on and JSON use.
std::string_view metric_name(Metric metric);
bool metric_is_time(Metric metric);

enum class EntityKind : uint8_t {
  kProgram,  // every process of the run together
  kProcess,
  kLock,  // the locks of one process that share a name, together
  kSite,  // one call site of such a lock
};

// One thing that runs have in common, and its value in each run.
struct EntityRuns {
  EntityKind kind = EntityKind::kProgram;
  // What matching compares, unique in a table: "git", "git/cache_lock", "git/cache_lock/lock
  // find_pack pack.c:120"; a second process of one executable is "git#2".
  std::string key;
  std::string process;  // "git", "git#2" ("" for the program)
  std::string lock;     // the lock's name ("" above locks)
  std::string site;     // "lock find_pack pack.c:120" (sites only)
  std::string detail;   // the lock's kind ("mutex", "rwlock"), a site's operation; may be empty
  uint32_t same_name_locks = 0;  // locks it stands for, in the run with the most (locks only)
  // values[metric][run]: one value per run of the set. A run without the entity counts 0 for
  // counts and totals and NaN for the percentile (no waits: no p99).
  std::array<std::vector<double>, kMetricCount> values;
  std::vector<bool> present;  // per run: the entity was there
  const std::vector<double>& of(Metric metric) const {
    return values[static_cast<std::size_t>(metric)];
  }
};

// A finding's identity across runs: its rule and the names of its locks.
struct FindingRuns {
  std::string key;  // "hot-lock cache_lock"
  std::string rule;
  std::string title;          // as the run that had it first worded it
  std::vector<bool> present;  // per run
};

struct RunMetrics {
  std::vector<std::string> runs;      // each run's profile directory, in order
  std::vector<EntityRuns> entities;   // the program first, then sorted by key
  std::vector<FindingRuns> findings;  // sorted by key
  const EntityRuns* find(const std::string& key) const;
};

// The table of `runs` (profiles symbolized, so that locks have names and sites have lines).
// With `sites` false, no site rows.
RunMetrics run_metrics(const std::vector<const Profile*>& runs, bool sites = true);

// The name matching gives each process of `profile`, in its order: its executable's name ("git";
// "pid 1234" without one), and for a second process of one executable "git#2".
std::vector<std::string> process_names(const Profile& profile);

// median, min and max of the values that are numbers (NaN: none of them is).
struct Spread {
  double median = 0;
  double min = 0;
  double max = 0;
  std::size_t count = 0;
};
Spread spread_of(const std::vector<double>& values);

}  // namespace lockscope::compare
