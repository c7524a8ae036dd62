// The writers of `lockscope diff` on two lab results (analysis/compare/bench_comparison.h): text,
// markdown and JSON, as for profiles (diff_report.h), with the lab's figures and their better
// directions. Each renders the comparison; the wording is bench_diff_wording.h's.
#pragma once

#include <ostream>

#include "analysis/compare/bench_comparison.h"
#include "report/diff_report.h"

namespace lockscope {

void write_bench_diff_text(const compare::BenchComparison& diff, const DiffOptions& options,
                           std::ostream& out);
void write_bench_diff_markdown(const compare::BenchComparison& diff, const DiffOptions& options,
                               std::ostream& out);
void write_bench_diff_json(const compare::BenchComparison& diff, const DiffOptions& options,
                           std::ostream& out);

}  // namespace lockscope
