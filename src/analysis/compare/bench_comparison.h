// `lockscope diff` of two lab results (bench_results.h): the cases both files hold, matched by
// scenario, lock and what else identifies them (thread count, CPU pair, variant), each figure's
// per-run values compared as profile diffs compare theirs (rank_test.h: Mann-Whitney U when both
// sides have kMinRunsForTest runs or more, the Hodges-Lehmann ratio with its interval) and judged
// in the figure's own direction: a throughput that rose is better, a time that rose is worse.
//
// One lock against another: when each file's scenario holds exactly one lock and they differ
// (`--locks pthread` against `--locks ticket`), its cases are matched by the other fields, so that
// the diff answers the lab's own question, "which is faster", with a test.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/compare/bench_results.h"
#include "analysis/compare/rank_test.h"
#include "analysis/compare/run_comparison.h"
#include "analysis/compare/run_metrics.h"

namespace lockscope::compare {

enum class BenchVerdict : uint8_t {
  kSame,        // "~": no significant change
  kBetter,      // significantly changed in the figure's better direction
  kWorse,       // ... in its worse direction
  kTooFewRuns,  // fewer than kMinRunsForTest runs on a side: no test
  kNoValue,     // no per-run values on a side (a summary only)
};
// "same", "better", "worse", "n too small", "no per-run values".
const char* bench_verdict_name(BenchVerdict verdict);

struct BenchFigureChange {
  const BenchFigure* base = nullptr;
  const BenchFigure* changed = nullptr;
  Spread base_spread;
  Spread changed_spread;
  std::optional<RankTest> test;        // none: too few runs, or no values on a side
  std::optional<RatioEstimate> ratio;  // new / base with its interval (none: no values)
  BenchVerdict verdict = BenchVerdict::kNoValue;
  // changed median / base median − 1; NaN when the base median is 0.
  double change() const;
};

// A case in both files, its figures in the base case's order (those both sides have).
struct BenchCaseChange {
  const BenchCase* base = nullptr;
  const BenchCase* changed = nullptr;
  std::vector<BenchFigureChange> figures;
};

// What a regression of the lab is: `figure` ("" for any figure) significantly worse, by more than
// `min_worsening` (0.10: a throughput 10 % lower, a time 10 % higher), the end of the ratio's
// interval nearest 1 past it too.
struct BenchGateRule {
  std::string figure;
  double min_worsening = 0.10;
  std::string text;  // as given: "iterations_per_ms:-5%"
};
// any:10%
BenchGateRule default_bench_gate_rule();
// "FIGURE[:PCT%]", FIGURE a figure of bench_results.h or "any"; PCT how much worse, signed (or
// not) in the figure's worse direction: iterations_per_ms:-5%, round_trip_ns:+20%, any:15%.
// Throws std::invalid_argument with a one-line reason.
BenchGateRule parse_bench_gate_rule(const std::string& text);

struct BenchRegression {
  std::size_t change = 0;  // index into BenchComparison::matched
  std::size_t figure = 0;  // index into its figures
  std::size_t rule = 0;    // index into BenchComparison::rules
};

struct BenchComparison {
  const BenchResults* base = nullptr;
  const BenchResults* changed = nullptr;
  double alpha = kDefaultAlpha;
  bool tested = false;  // at least one figure had runs enough for a test
  // Why the two files may not measure the same thing: another machine, another build of the lab,
  // a scenario run with other parameters. One line each.
  std::vector<std::string> warnings;
  std::vector<std::string> skipped;  // "base: pi skipped: …": scenarios a side could not run
  std::vector<BenchCaseChange> matched;
  std::vector<const BenchCase*> gone;   // in the base file only
  std::vector<const BenchCase*> added;  // in the new file only
  std::vector<BenchGateRule> rules;
  std::vector<BenchRegression> regressions;
};

// `base` and `changed` must outlive the comparison (it points into them).
BenchComparison compare_bench(const BenchResults& base, const BenchResults& changed,
                              std::vector<BenchGateRule> rules, double alpha = kDefaultAlpha);

}  // namespace lockscope::compare
