#include "analysis/compare/bench_comparison.h"

#include <fmt/core.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

namespace lockscope::compare {
namespace {

// The machine fields that make it another machine, and those that make it another build of the
// lab (an assertions-on or sanitizer build runs the same locks several times slower).
constexpr const char* kMachineFields[] = {"cpu_model", "online_cpus", "kernel", "glibc"};
constexpr const char* kBuildFields[] = {"compiler", "build"};

std::string value_or_none(const std::map<std::string, std::string>& fields,
                          const std::string& name) {
  const auto found = fields.find(name);
  return found == fields.end() ? "(none)" : found->second;
}

// "kernel 6.1.0 → 6.5.0, glibc 2.36 → 2.38" over `names`; "" when every one is the same.
template <class Names>
std::string differences(const std::map<std::string, std::string>& base,
                        const std::map<std::string, std::string>& changed, const Names& names) {
  std::string text;
  for (const auto& field : names) {
    const std::string name(field);
    const std::string before = value_or_none(base, name), after = value_or_none(changed, name);
    if (before != after)
      text += fmt::format("{}{} {} → {}", text.empty() ? "" : ", ", name, before, after);
  }
  return text;
}

std::vector<std::string> warnings_of(const BenchResults& base, const BenchResults& changed) {
  std::vector<std::string> warnings;
  if (const std::string d = differences(base.machine, changed.machine, kMachineFields); !d.empty())
    warnings.push_back("not the same machine: " + d);
  if (const std::string d = differences(base.machine, changed.machine, kBuildFields); !d.empty())
    warnings.push_back("not the same build of the lab: " + d);
  for (const auto& [scenario, before] : base.parameters) {
    const auto after = changed.parameters.find(scenario);
    if (after == changed.parameters.end()) continue;
    std::set<std::string> names;
    for (const auto& [name, value] : before) names.insert(name);
    for (const auto& [name, value] : after->second) names.insert(name);
    if (const std::string d = differences(before, after->second, names); !d.empty())
      warnings.push_back(fmt::format("{} not run the same way: {}", scenario, d));
  }
  return warnings;
}

// The scenarios in which each file holds exactly one lock, and not the same one: their cases are
// matched without the lock (pthread → ticket).
std::set<std::string> lock_swapped_scenarios(const BenchResults& base,
                                             const BenchResults& changed) {
  auto locks_of = [](const BenchResults& results) {
    std::map<std::string, std::set<std::string>> locks;
    for (const BenchCase& c : results.cases)
      if (!c.lock.empty()) locks[c.scenario].insert(c.lock);
    return locks;
  };
  const auto before = locks_of(base), after = locks_of(changed);
  std::set<std::string> swapped;
  for (const auto& [scenario, locks] : before) {
    const auto other = after.find(scenario);
    if (other != after.end() && locks.size() == 1 && other->second.size() == 1 &&
        locks != other->second)
      swapped.insert(scenario);
  }
  return swapped;
}

std::string match_key(const BenchCase& c, const std::set<std::string>& swapped) {
  return c.scenario + '\n' + (swapped.count(c.scenario) ? "" : c.lock) + '\n' + c.detail;
}

BenchFigureChange compare_figure(const BenchFigure& base, const BenchFigure& changed,
                                 double alpha) {
  BenchFigureChange result;
  result.base = &base;
  result.changed = &changed;
  result.base_spread = spread_of(base.values);
  result.changed_spread = spread_of(changed.values);
  if (base.values.empty() || changed.values.empty()) {
    result.verdict = BenchVerdict::kNoValue;
    return result;
  }
  // A floor of 0: a fairness of 0.4 or a system time of 2 ms is a value, not "below 1".
  result.ratio = hodges_lehmann_ratio(base.values, changed.values, 1 - alpha, 0.0);
  if (base.values.size() < kMinRunsForTest || changed.values.size() < kMinRunsForTest) {
    result.verdict = BenchVerdict::kTooFewRuns;
    return result;
  }
  result.test = mann_whitney(changed.values, base.values);
  if (result.test->p_value >= alpha) {
    result.verdict = BenchVerdict::kSame;
    return result;
  }
  // The direction of the estimate that goes with the test (more than half the pairs of runs
  // rose), not of the two medians, which can disagree with it on a tie.
  const bool rose =
      result.ratio->ratio > 1 ||
      (result.ratio->ratio == 1 && result.changed_spread.median >= result.base_spread.median);
  result.verdict =
      rose == (base.kind->better == Better::kHigher) ? BenchVerdict::kBetter : BenchVerdict::kWorse;
  return result;
}

bool regressed(const BenchFigureChange& change, const BenchGateRule& rule) {
  if (change.verdict != BenchVerdict::kWorse || !change.ratio) return false;
  if (!rule.figure.empty() && rule.figure != change.base->kind->name) return false;
  const double limit = rule.min_worsening, growth = change.change();
  if (change.base->kind->better == Better::kHigher)
    return change.ratio->high < 1 - limit && growth < -limit;
  // NaN: a time from 0, any growth is past the limit.
  return change.ratio->low > 1 + limit && (std::isnan(growth) || growth > limit);
}

}  // namespace

const char* bench_verdict_name(BenchVerdict verdict) {
  switch (verdict) {
    case BenchVerdict::kSame:
      return "same";
    case BenchVerdict::kBetter:
      return "better";
    case BenchVerdict::kWorse:
      return "worse";
    case BenchVerdict::kTooFewRuns:
      return "n too small";
    case BenchVerdict::kNoValue:
      return "no per-run values";
  }
  return "?";
}

double BenchFigureChange::change() const {
  if (!(base_spread.median > 0)) return std::numeric_limits<double>::quiet_NaN();
  return changed_spread.median / base_spread.median - 1;
}

BenchGateRule default_bench_gate_rule() {
  return BenchGateRule{"", 0.10, "any:10%"};
}

BenchGateRule parse_bench_gate_rule(const std::string& text) {
  const std::size_t colon = text.find(':');
  const std::string name = text.substr(0, colon);
  std::string percent = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (percent.find(':') != std::string::npos)
    throw std::invalid_argument(fmt::format(
        "--fail-on {}: a lab figure takes FIGURE[:PERCENT%], no amount after it", text));
  const BenchFigureKind* kind = bench_figure_kind(name);
  if (!kind && name != "any") {
    std::string known;
    for (const BenchFigureKind& k : bench_figure_kinds()) known += std::string(k.name) + ", ";
    throw std::invalid_argument(
        fmt::format("--fail-on {}: '{}' is not a lab figure ({}or any)", text, name, known));
  }
  BenchGateRule rule{kind ? std::string(kind->name) : "", 0.10, text};
  if (percent.empty()) return rule;
  const char sign = percent.front() == '+' || percent.front() == '-' ? percent.front() : 0;
  if (kind && sign) {
    const char worse = kind->better == Better::kHigher ? '-' : '+';
    if (sign != worse)
      throw std::invalid_argument(
          fmt::format("--fail-on {}: {} is better {}; a regression is {} ({}:{}{})", text, name,
                      kind->better == Better::kHigher ? "higher" : "lower",
                      worse == '-' ? "a drop" : "a rise", name, worse, percent.substr(1)));
  }
  if (sign) percent.erase(0, 1);
  std::size_t used = 0;
  double value = -1;
  try {
    value = std::stod(percent, &used);
  } catch (const std::exception&) {
  }
  if (value < 0 || !std::isfinite(value) || percent.substr(used) != "%")
    throw std::invalid_argument(
        fmt::format("--fail-on {}: '{}' is not a percentage (5%, -5%, +5%)", text, percent));
  rule.min_worsening = value / 100;
  return rule;
}

BenchComparison compare_bench(const BenchResults& base, const BenchResults& changed,
                              std::vector<BenchGateRule> rules, double alpha) {
  BenchComparison result;
  result.base = &base;
  result.changed = &changed;
  result.alpha = alpha;
  result.rules = std::move(rules);
  result.warnings = warnings_of(base, changed);
  for (const std::string& s : base.skipped) result.skipped.push_back("base: " + s);
  for (const std::string& s : changed.skipped) result.skipped.push_back("new: " + s);
  const std::set<std::string> swapped = lock_swapped_scenarios(base, changed);
  std::map<std::string, const BenchCase*> new_cases;
  for (const BenchCase& c : changed.cases) new_cases.emplace(match_key(c, swapped), &c);
  std::set<const BenchCase*> matched_new;
  for (const BenchCase& before : base.cases) {
    const auto found = new_cases.find(match_key(before, swapped));
    if (found == new_cases.end()) {
      result.gone.push_back(&before);
      continue;
    }
    BenchCaseChange change{&before, found->second, {}};
    matched_new.insert(found->second);
    for (const BenchFigure& figure : before.figures)
      if (const BenchFigure* after = found->second->figure(figure.kind->name))
        change.figures.push_back(compare_figure(figure, *after, alpha));
    result.matched.push_back(std::move(change));
  }
  for (const BenchCase& after : changed.cases)
    if (!matched_new.count(&after)) result.added.push_back(&after);
  for (std::size_t c = 0; c < result.matched.size(); ++c) {
    const std::vector<BenchFigureChange>& figures = result.matched[c].figures;
    for (std::size_t f = 0; f < figures.size(); ++f) {
      result.tested = result.tested || figures[f].test.has_value();
      for (std::size_t r = 0; r < result.rules.size(); ++r)
        if (regressed(figures[f], result.rules[r])) {
          result.regressions.push_back({c, f, r});
          break;  // a figure is one regression, whichever rules it breaks
        }
    }
  }
  return result;
}

}  // namespace lockscope::compare
