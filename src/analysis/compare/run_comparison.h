// `lockscope diff`: two sets of runs compared figure by figure, each change with its test
// (rank_test.h) and, for the CI gate, the rules a change must break to count as a regression.
//
// A change is significant when both sides have at least kMinRunsForTest runs and Mann-Whitney's
// p is below alpha (benchstat's rule); below that many runs there is no test ("n too small"), and
// the gate cannot fail: nothing is shown to have regressed.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "analysis/compare/rank_test.h"
#include "analysis/compare/run_metrics.h"

namespace lockscope::compare {

inline constexpr double kDefaultAlpha = 0.05;

enum class Direction : uint8_t {
  kSame,        // "~": no significant change
  kHigher,      // significantly higher in the new runs
  kLower,       // significantly lower
  kTooFewRuns,  // fewer than kMinRunsForTest runs on a side: no test
  kNoValue,     // no value on a side (a p99 of no waits)
};
const char* direction_name(Direction direction);  // "same", "higher", "lower", "n too small", ...

struct MetricChange {
  Metric metric = Metric::kWaitNs;
  Spread base;
  Spread changed;
  std::optional<RankTest> test;        // none: too few runs, or no value on a side
  std::optional<RatioEstimate> ratio;  // new / base, with its interval (none: no value)
  Direction direction = Direction::kNoValue;
  // changed.median / base.median − 1; NaN when the base median is 0.
  double change() const;
};

// One entity in both sets.
struct EntityChange {
  const EntityRuns* base = nullptr;
  const EntityRuns* changed = nullptr;
  std::array<MetricChange, kMetricCount> metrics;
  const MetricChange& of(Metric metric) const { return metrics[static_cast<std::size_t>(metric)]; }
  const EntityRuns& entity() const { return *base; }
};

// What a regression is: `metric` grew significantly, by more than `min_growth` (0.10: 10 %, and
// the lower end of the ratio's interval above 1 + min_growth too) and by more than `min_absolute`
// (ns for times, a count otherwise). It judges the program, each lock, and each process when
// several were matched (one is the program).
struct GateRule {
  Metric metric = Metric::kWaitNs;
  double min_growth = 0.10;
  double min_absolute = 1e6;
  std::string text;  // as given: "wait:+10%:1ms"
};
// The default: wait:+10%:1ms.
GateRule default_gate_rule();
// "METRIC[:+PCT%][:ABSOLUTE]": wait:+5%:0.5ms, contended:+20%, hold:+10%:2ms, acquisitions::100.
// Throws std::invalid_argument with a one-line reason.
GateRule parse_gate_rule(const std::string& text);

struct Regression {
  std::size_t change = 0;  // index into Comparison::matched
  std::size_t rule = 0;    // index into Comparison::rules
};

struct FindingChange {
  const FindingRuns* finding = nullptr;
  std::size_t base_runs = 0;     // runs of the base set that had it
  std::size_t changed_runs = 0;  // ... of the new set
};

struct Comparison {
  std::size_t base_runs = 0;
  std::size_t changed_runs = 0;
  double alpha = kDefaultAlpha;
  bool tested = false;                           // both sides have enough runs for a test
  std::vector<EntityChange> matched;             // the program first, then by key
  std::vector<const EntityRuns*> gone;           // in the base runs only
  std::vector<const EntityRuns*> added;          // in the new runs only
  std::size_t processes = 0;                     // processes of either side, matched or not
  std::vector<FindingChange> findings_appeared;  // in at least half the new runs, not the base's
  std::vector<FindingChange> findings_gone;      // the other way round
  std::vector<GateRule> rules;
  std::vector<Regression> regressions;
};

// `base` and `changed` must outlive the comparison (it points into them).
Comparison compare_runs(const RunMetrics& base, const RunMetrics& changed,
                        std::vector<GateRule> rules, double alpha = kDefaultAlpha);

}  // namespace lockscope::compare
