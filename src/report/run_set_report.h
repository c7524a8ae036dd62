// The report of a repeated set of runs (`record --repeat N`, then `report DIR`): every figure of
// compare::run_metrics() over the runs. Text shows each as median [min–max] (the shape of the seed
// reports that ran one benchmark 10 times), JSON every run's value as well. Other formats describe
// one run: `report DIR/K`.
//
// The writers render the table run_metrics() computed; they compute nothing but the spread of a
// row's values, which is how the table is meant to be read (compare::spread_of).
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "analysis/compare/run_metrics.h"

namespace lockscope {

struct RunSetReport {
  const compare::RunMetrics& metrics;
  std::string directory;  // the set's directory, as given
  std::string command;    // the program's command line, as its first run's first process had it
};

struct RunSetTextOptions {
  std::size_t top = 10;  // locks listed (by median wait); every one with `all`
  bool all = false;
};

// A finding counts as the set's when it appeared in at least half of the runs.
bool shown_in_set(const compare::FindingRuns& finding);

void write_run_set_text(const RunSetReport& report, const RunSetTextOptions& options,
                        std::ostream& out);
// Schema "lockscope-run-set", version kRunSetJsonVersion (docs/json-schema.md).
inline constexpr int kRunSetJsonVersion = 1;
void write_run_set_json(const RunSetReport& report, std::ostream& out);

}  // namespace lockscope
