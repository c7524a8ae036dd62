// The words and numbers of a lab diff (analysis/compare/bench_comparison.h) that its text,
// markdown and JSON share, in the profile diff's style (diff_wording.h): a figure in its unit, a
// change with its interval, "better"/"worse" with p, "~" or "n too small", the verdict sentence,
// and which rows a diff lists.
#pragma once

#include <string>
#include <vector>

#include "analysis/compare/bench_comparison.h"

namespace lockscope::bench_diff_wording {

// "12.3 k/ms", "84.2 ns", "0.215 s", "0.93" (a fraction); "–" for no value.
std::string value(const compare::BenchFigureKind& kind, double value);
// "12.3 k/ms [11.9 k–13.0 k]" (one run, or every run alike: no range).
std::string spread(const compare::BenchFigureKind& kind, const compare::Spread& spread);
// "iterations_per_ms ↑" (higher is better) or "round_trip_ns ↓".
std::string figure_name(const compare::BenchFigureKind& kind);
// "−31.2 %", "+4.0 %", "from 0", "–".
std::string change(const compare::BenchFigureChange& change);
// "×0.69 [0.62–0.76]"; "" without values.
std::string ratio(const compare::BenchFigureChange& change);
// "worse, p=0.008", "better, p=0.002", "~ (p=0.43)", "n too small", "no per-run values".
std::string significance(const compare::BenchFigureChange& change);
// "5+5".
std::string runs(const compare::BenchCaseChange& change);

// "mutex pthread, 2 threads", "c2c CPU 0 ↔ CPU 1", "storm threads", "condvar".
std::string case_name(const compare::BenchCase& c);
// The same for a matched case; its lock as "pthread → ticket" when the two files hold one each.
std::string case_name(const compare::BenchCaseChange& change);

// "Lab figures: 1 worse, 0 better, 2 without significant change (of 3; 5+5 runs)", or why
// nothing was tested.
std::string verdict(const compare::BenchComparison& diff);
// For each case that compares one lock with another, the lab's own sentence on its first figure
// (the one the lab ranks locks by): "ticket is 4.52× slower than pthread (iterations_per_ms,
// mutex 2 threads, p=0.008)", or "... no significant difference (p=0.31)".
std::vector<std::string> lock_against_lock(const compare::BenchComparison& diff);
// "passed (any:10%)", "FAILED: 1 regression (any:10%)", "not judged (...)".
std::string gate_line(const compare::BenchComparison& diff);

struct Row {
  const compare::BenchCaseChange* case_change = nullptr;
  const compare::BenchFigureChange* figure = nullptr;
  bool regression = false;
};
// Regressions, then the other significant changes (worse before better, the largest factor
// first), then, unless `all`, the first figure of up to `top` more cases in the files' order;
// with `all`, every figure of every matched case.
std::vector<Row> listed_rows(const compare::BenchComparison& diff, std::size_t top, bool all);

}  // namespace lockscope::bench_diff_wording
