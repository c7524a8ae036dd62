#include "analysis/compare/run_comparison.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace lockscope::compare {
namespace {

std::vector<double> numbers_of(const std::vector<double>& values) {
  std::vector<double> numbers;
  for (double v : values)
    if (!std::isnan(v)) numbers.push_back(v);
  return numbers;
}

MetricChange compare_metric(Metric metric, const EntityRuns& base, const EntityRuns& changed,
                            double alpha) {
  MetricChange result;
  result.metric = metric;
  const std::vector<double> before = numbers_of(base.of(metric));
  const std::vector<double> after = numbers_of(changed.of(metric));
  result.base = spread_of(before);
  result.changed = spread_of(after);
  if (before.empty() || after.empty()) {
    result.direction = Direction::kNoValue;
    return result;
  }
  result.ratio = hodges_lehmann_ratio(before, after, 1 - alpha);
  if (before.size() < kMinRunsForTest || after.size() < kMinRunsForTest) {
    result.direction = Direction::kTooFewRuns;
    return result;
  }
  result.test = mann_whitney(after, before);
  if (result.test->p_value >= alpha)
    result.direction = Direction::kSame;
  else
    result.direction =
        result.changed.median >= result.base.median ? Direction::kHigher : Direction::kLower;
  return result;
}

// The program, each lock, and each process when there are several (one process is the program).
bool judged_by_gate(EntityKind kind, bool several_processes) {
  return kind == EntityKind::kProgram || kind == EntityKind::kLock ||
         (kind == EntityKind::kProcess && several_processes);
}

bool regressed(const MetricChange& change, const GateRule& rule) {
  if (change.direction != Direction::kHigher || !change.ratio) return false;
  if (change.ratio->low <= 1 + rule.min_growth) return false;
  if (change.changed.median - change.base.median <= rule.min_absolute) return false;
  const double growth = change.change();
  return std::isnan(growth) || growth > rule.min_growth;  // NaN: from 0, any growth is past it
}

// A finding "is there" in a set when at least half its runs had it.
bool in_most(std::size_t runs_with, std::size_t runs) {
  return runs > 0 && 2 * runs_with >= runs;
}

std::size_t count_present(const std::vector<bool>& present) {
  return static_cast<std::size_t>(std::count(present.begin(), present.end(), true));
}

void compare_findings(const RunMetrics& base, const RunMetrics& changed, Comparison& result) {
  auto count_in = [](const RunMetrics& set, const std::string& key) -> std::size_t {
    for (const FindingRuns& f : set.findings)
      if (f.key == key) return count_present(f.present);
    return 0;
  };
  for (const FindingRuns& f : changed.findings) {
    const std::size_t now = count_present(f.present), before = count_in(base, f.key);
    if (in_most(now, changed.runs.size()) && !in_most(before, base.runs.size()))
      result.findings_appeared.push_back({&f, before, now});
  }
  for (const FindingRuns& f : base.findings) {
    const std::size_t before = count_present(f.present), now = count_in(changed, f.key);
    if (in_most(before, base.runs.size()) && !in_most(now, changed.runs.size()))
      result.findings_gone.push_back({&f, before, now});
  }
}

// "1ms", "0.5ms", "250us", "2s", "100" (ns for a time, a count otherwise).
double parse_amount(const std::string& text, bool time, const std::string& rule) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument(fmt::format("--fail-on {}: '{}' is not a number", rule, text));
  }
  const std::string unit = text.substr(used);
  double scale = 1;
  if (!unit.empty()) {
    if (!time)
      throw std::invalid_argument(
          fmt::format("--fail-on {}: a count takes no unit ('{}')", rule, unit));
    if (unit == "ns")
      scale = 1;
    else if (unit == "us")
      scale = 1e3;
    else if (unit == "ms")
      scale = 1e6;
    else if (unit == "s")
      scale = 1e9;
    else
      throw std::invalid_argument(
          fmt::format("--fail-on {}: unknown unit '{}' (ns, us, ms, s)", rule, unit));
  }
  if (value < 0 || !std::isfinite(value))
    throw std::invalid_argument(fmt::format("--fail-on {}: '{}' is below 0", rule, text));
  return value * scale;
}

}  // namespace

const char* direction_name(Direction direction) {
  switch (direction) {
    case Direction::kSame:
      return "same";
    case Direction::kHigher:
      return "higher";
    case Direction::kLower:
      return "lower";
    case Direction::kTooFewRuns:
      return "n too small";
    case Direction::kNoValue:
      return "no value";
  }
  return "?";
}

double MetricChange::change() const {
  if (!(base.median > 0)) return std::numeric_limits<double>::quiet_NaN();
  return changed.median / base.median - 1;
}

GateRule default_gate_rule() {
  return GateRule{Metric::kWaitNs, 0.10, 1e6, "wait:+10%:1ms"};
}

GateRule parse_gate_rule(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t colon; (colon = text.find(':', start)) != std::string::npos; start = colon + 1)
    parts.push_back(text.substr(start, colon - start));
  parts.push_back(text.substr(start));
  if (parts.size() > 3)
    throw std::invalid_argument(
        fmt::format("--fail-on {}: expected METRIC[:+PERCENT%][:AMOUNT]", text));
  GateRule rule;
  rule.text = text;
  rule.min_absolute = 0;
  bool known = false;
  for (Metric metric : kMetrics)
    if (parts[0] == metric_name(metric)) rule.metric = metric, known = true;
  if (!known)
    throw std::invalid_argument(fmt::format(
        "--fail-on {}: unknown metric '{}' (acquisitions, contended, wait, wait_p99, hold)", text,
        parts[0]));
  if (parts.size() > 1 && !parts[1].empty()) {
    std::string percent = parts[1];
    if (percent.front() == '+') percent.erase(0, 1);
    if (percent.empty() || percent.back() != '%')
      throw std::invalid_argument(
          fmt::format("--fail-on {}: the growth '{}' must be a percentage (+10%)", text, parts[1]));
    percent.pop_back();
    rule.min_growth = parse_amount(percent, false, text) / 100;
  }
  if (parts.size() > 2 && !parts[2].empty())
    rule.min_absolute = parse_amount(parts[2], metric_is_time(rule.metric), text);
  return rule;
}

Comparison compare_runs(const RunMetrics& base, const RunMetrics& changed,
                        std::vector<GateRule> rules, double alpha) {
  Comparison result;
  result.base_runs = base.runs.size();
  result.changed_runs = changed.runs.size();
  result.alpha = alpha;
  result.tested = result.base_runs >= kMinRunsForTest && result.changed_runs >= kMinRunsForTest;
  result.rules = std::move(rules);
  for (const EntityRuns& before : base.entities) {
    const EntityRuns* after = changed.find(before.key);
    if (!after) {
      result.gone.push_back(&before);
      continue;
    }
    EntityChange change;
    change.base = &before;
    change.changed = after;
    for (Metric metric : kMetrics)
      change.metrics[static_cast<std::size_t>(metric)] =
          compare_metric(metric, before, *after, alpha);
    result.matched.push_back(std::move(change));
  }
  for (const EntityRuns& after : changed.entities)
    if (!base.find(after.key)) result.added.push_back(&after);
  std::size_t processes = 0;  // matched: one alone is the program, which the gate judges
  for (const EntityChange& change : result.matched)
    processes += change.entity().kind == EntityKind::kProcess;
  result.processes = processes;
  for (const auto* one_side : {&result.added, &result.gone})
    for (const EntityRuns* entity : *one_side)
      result.processes += entity->kind == EntityKind::kProcess;
  for (std::size_t c = 0; c < result.matched.size(); ++c) {
    const EntityChange& change = result.matched[c];
    if (!judged_by_gate(change.entity().kind, processes > 1)) continue;
    for (std::size_t r = 0; r < result.rules.size(); ++r)
      if (regressed(change.of(result.rules[r].metric), result.rules[r]))
        result.regressions.push_back({c, r});
  }
  compare_findings(base, changed, result);
  return result;
}

}  // namespace lockscope::compare
