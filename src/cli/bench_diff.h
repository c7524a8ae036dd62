// `lockscope diff A.json B.json`: two `lockscope bench --json` results compared case by case
// (analysis/compare/bench_comparison.h). diff_command.cpp decides which kind of diff it is.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/compare/bench_comparison.h"
#include "report/diff_report.h"

namespace lockscope {

// True when BASE and NEW are lab results (files), false when they are profiles or sets of runs
// (directories). Throws CliError when one is a file and the other a directory.
bool are_bench_results(const std::string& base, const std::string& changed);

// Both files read and compared; the comparison points into them.
struct BenchDiff {
  compare::BenchResults base;
  compare::BenchResults changed;
  compare::BenchComparison comparison;
};
// Throws CliError for a file that is not a lab result, a --fail-on rule that names no lab figure,
// and two results with no case in common (nothing compared is not a passed gate).
std::unique_ptr<BenchDiff> compare_bench_files(const std::string& base, const std::string& changed,
                                               const std::vector<std::string>& fail_on,
                                               double alpha);
// `format`: text, markdown or json.
void write_bench_diff(const BenchDiff& diff, const std::string& format, const DiffOptions& options,
                      std::ostream& out);

}  // namespace lockscope
