// `lockscope bench c2c`: cache-line ping-pong between every pair of allowed CPUs — the physical
// limit any lock handoff has to pay.
//
// Two threads pinned to CPUs a and b take turns writing one shared cache line. One round trip moves
// the line a→b→a, i.e. two one-way transfers. A lock handoff needs at least one one-way transfer
// (the releaser's write must reach the acquirer), so no lock can hand off faster than 2 /
// round-trip: handoff_bound_per_second() is that bound, and the mutex report shows each lock as a
// fraction of it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "bench/sample_stats.h"

namespace lockscope::lab {

struct C2cOptions {
  int runs = 5;
  std::uint64_t round_trips = 200'000;
  int max_cpus = 8;  // pairs grow quadratically; measure the first max_cpus allowed CPUs
};

struct C2cPair {
  int cpu_a = 0;
  int cpu_b = 0;
  std::vector<double> round_trip_ns;  // one per run
  stats::SampleSummary summary;
};

struct C2cMeasurement {
  std::vector<C2cPair> pairs;
  std::optional<double> best_round_trip_ns;  // lowest median over pairs; empty when not measurable
  std::string skip_reason;
};

double handoff_bound_per_second(double round_trip_ns);
double round_trip_ns(std::int64_t elapsed_ns, std::uint64_t round_trips);

// Measures without printing (the mutex scenario uses this for its bound).
C2cMeasurement measure_c2c(const C2cOptions& options);
// Prints the report of a measurement and returns the scenario's JSON section.
nlohmann::json print_c2c_report(const C2cMeasurement& measurement, const C2cOptions& options,
                                std::ostream& out);
// Measures, prints the report and returns the scenario's JSON section.
nlohmann::json run_c2c_scenario(const C2cOptions& options, std::ostream& out);
nlohmann::json to_json(const C2cMeasurement& measurement, const C2cOptions& options);

}  // namespace lockscope::lab
