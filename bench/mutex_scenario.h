// `lockscope bench mutex` (seed 4: two threads on one lock, ~2000 → ~30 iterations/ms once
// contended).
//
// For every lock × thread count: iterations/ms over --runs runs, per-thread fairness, CPU time and
// context switches, and the contended handoff rate next to the c2c bound (handoffs/s as a fraction
// of the most a cache-coherent machine can do, see c2c_scenario.h).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "bench/c2c_scenario.h"
#include "bench/mutex_workload.h"

namespace lockscope::lab {

struct MutexOptions {
  std::vector<std::string> locks;  // validated names from LabLocks
  std::vector<int> threads{1, 2, 4};
  double duration_s = 0.5;
  std::uint64_t iterations = 0;  // per thread; overrides duration when non-zero
  std::uint32_t cs_work = 0;
  std::uint32_t outside_work = 0;
  int runs = 3;
  // The bound: measured by the caller (`all`), else measured quickly here unless measure_bound is
  // off.
  std::optional<double> c2c_round_trip_ns;
  bool measure_bound = true;
};

// The scenario's arithmetic, kept free of threads so it can be unit-tested.
double iterations_per_ms(std::uint64_t acquisitions, double elapsed_s);
double handoffs_per_second(std::uint64_t handoffs, double elapsed_s);
double fairness_min_over_max(const std::vector<std::uint64_t>& per_thread);  // 1 = perfectly even
double jain_fairness_index(const std::vector<std::uint64_t>& per_thread);    // 1/n … 1
double fraction_of_bound(double handoffs_per_s, double round_trip_ns);

// Runs one lock by name (throws std::invalid_argument for unknown names).
MutexRun run_mutex_workload_by_name(const std::string& lock, const MutexWorkload& workload);

nlohmann::json run_mutex_scenario(const MutexOptions& options, std::ostream& out);

}  // namespace lockscope::lab
