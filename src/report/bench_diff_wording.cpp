#include "report/bench_diff_wording.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "report/diff_wording.h"

namespace lockscope::bench_diff_wording {

using compare::BenchCaseChange;
using compare::BenchComparison;
using compare::BenchFigureChange;
using compare::BenchFigureKind;
using compare::BenchVerdict;
using compare::Better;

namespace {

// Three significant digits, as the lab prints its figures (bench_output.h's format_figure).
std::string digits(double v) {
  const double magnitude = std::abs(v);
  if (magnitude >= 100) return fmt::format("{:.0f}", v);
  if (magnitude >= 10) return fmt::format("{:.1f}", v);
  if (magnitude >= 1) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3g}", v);
}

std::string with_prefix(double v) {
  const double magnitude = std::abs(v);
  if (magnitude >= 1e9) return digits(v / 1e9) + " G";
  if (magnitude >= 1e6) return digits(v / 1e6) + " M";
  if (magnitude >= 1e4) return digits(v / 1e3) + " k";
  return digits(v);
}

std::string join_unit(const std::string& number, const BenchFigureKind& kind) {
  if (kind.unit.empty()) return number;
  // "12.3 k/ms", "84.2 ns": a rate's unit sticks to its prefix, a time's takes a space.
  const bool prefixed = !number.empty() && number.back() >= 'A' && number.back() <= 'z';
  return number + (kind.unit.front() == '/' || prefixed ? "" : " ") + std::string(kind.unit);
}

std::string runs_of(const BenchComparison& diff) {
  std::set<std::pair<std::size_t, std::size_t>> counts;
  for (const BenchCaseChange& c : diff.matched) counts.insert({c.base->runs, c.changed->runs});
  if (counts.size() == 1)
    return fmt::format("{}+{} runs", counts.begin()->first, counts.begin()->second);
  return "runs per case differ";
}

bool significant(const BenchFigureChange& f) {
  return f.verdict == BenchVerdict::kBetter || f.verdict == BenchVerdict::kWorse;
}

double distance(const BenchFigureChange& f) {
  return f.ratio ? std::abs(std::log(std::max(f.ratio->ratio, 1e-300))) : 0;
}

}  // namespace

std::string value(const BenchFigureKind& kind, double v) {
  if (std::isnan(v)) return "–";
  return join_unit(with_prefix(v), kind);
}

std::string spread(const BenchFigureKind& kind, const compare::Spread& s) {
  if (s.count == 0) return "–";
  if (s.count == 1 || s.min == s.max) return value(kind, s.median);
  return fmt::format("{} [{}–{}]", value(kind, s.median), with_prefix(s.min), with_prefix(s.max));
}

std::string figure_name(const BenchFigureKind& kind) {
  return std::string(kind.name) + (kind.better == Better::kHigher ? " ↑" : " ↓");
}

std::string change(const BenchFigureChange& f) {
  if (f.base_spread.count == 0 || f.changed_spread.count == 0) return "–";
  const double fraction = f.change();
  if (std::isnan(fraction)) return f.changed_spread.median > 0 ? "from 0" : "0 %";
  return diff_wording::percent(fraction);
}

std::string ratio(const BenchFigureChange& f) {
  return f.ratio ? diff_wording::ratio(*f.ratio) : "";
}

std::string significance(const BenchFigureChange& f) {
  switch (f.verdict) {
    case BenchVerdict::kBetter:
    case BenchVerdict::kWorse:
      return fmt::format("{}, {}", compare::bench_verdict_name(f.verdict),
                         diff_wording::p_value(f.test->p_value));
    case BenchVerdict::kSame:
      return "~ (" + diff_wording::p_value(f.test->p_value) + ")";
    case BenchVerdict::kTooFewRuns:
    case BenchVerdict::kNoValue:
      return compare::bench_verdict_name(f.verdict);
  }
  return "";
}

std::string runs(const BenchCaseChange& c) {
  return fmt::format("{}+{}", c.base->runs, c.changed->runs);
}

namespace {

std::string name_with_lock(const compare::BenchCase& c, const std::string& lock) {
  std::string name = c.scenario;
  if (!lock.empty()) name += " " + lock;
  if (!c.detail.empty()) name += (lock.empty() ? " " : ", ") + c.detail;
  return name;
}

}  // namespace

std::string case_name(const compare::BenchCase& c) {
  return name_with_lock(c, c.lock);
}

std::string case_name(const BenchCaseChange& c) {
  if (c.base->lock == c.changed->lock) return case_name(*c.base);
  return name_with_lock(*c.base, c.base->lock + " → " + c.changed->lock);
}

std::string verdict(const BenchComparison& diff) {
  std::size_t worse = 0, better = 0, same = 0, untested = 0;
  for (const BenchCaseChange& c : diff.matched)
    for (const BenchFigureChange& f : c.figures) {
      worse += f.verdict == BenchVerdict::kWorse;
      better += f.verdict == BenchVerdict::kBetter;
      same += f.verdict == BenchVerdict::kSame;
      untested += f.verdict == BenchVerdict::kTooFewRuns || f.verdict == BenchVerdict::kNoValue;
    }
  if (diff.matched.empty()) return "Lab figures: no case in common";
  if (!diff.tested)
    return fmt::format(
        "Lab figures: not tested, {} (a test needs {} runs a side: lockscope bench … --runs {})",
        runs_of(diff), compare::kMinRunsForTest, compare::kMinRunsForTest);
  std::string text =
      fmt::format("Lab figures: {} worse, {} better, {} without significant change (of {}; {})",
                  worse, better, same, worse + better + same + untested, runs_of(diff));
  if (untested > 0) text += fmt::format("; {} not tested", untested);
  return text;
}

std::vector<std::string> lock_against_lock(const BenchComparison& diff) {
  std::vector<std::string> lines;
  for (const BenchCaseChange& c : diff.matched) {
    if (c.base->lock == c.changed->lock || c.figures.empty()) continue;
    const BenchFigureChange& f = c.figures.front();
    const std::string what = fmt::format("{}, {}{}", f.base->kind->name, c.base->scenario,
                                         c.base->detail.empty() ? "" : " " + c.base->detail);
    if (!significant(f)) {
      lines.push_back(fmt::format(
          "{} against {}: no significant difference ({}, {})", c.changed->lock, c.base->lock, what,
          f.test ? diff_wording::p_value(f.test->p_value) : significance(f)));
      continue;
    }
    // As the lab's relative summary says it: a throughput's ratio, a time's inverse.
    const double speed =
        f.base->kind->better == Better::kHigher ? f.ratio->ratio : 1 / f.ratio->ratio;
    lines.push_back(fmt::format("{} is {:.2f}× {} than {} ({}, {})", c.changed->lock,
                                speed >= 1 ? speed : 1 / speed, speed >= 1 ? "faster" : "slower",
                                c.base->lock, what, diff_wording::p_value(f.test->p_value)));
  }
  return lines;
}

std::string gate_line(const BenchComparison& diff) {
  std::string rules;
  for (const compare::BenchGateRule& rule : diff.rules)
    rules += (rules.empty() ? "" : ", ") + rule.text;
  if (!diff.tested)
    return fmt::format("not judged (a regression needs {} runs a side to be shown)",
                       compare::kMinRunsForTest);
  if (diff.regressions.empty()) return fmt::format("passed ({})", rules);
  return fmt::format("FAILED: {} regression{} ({})", diff.regressions.size(),
                     diff.regressions.size() == 1 ? "" : "s", rules);
}

std::vector<Row> listed_rows(const BenchComparison& diff, std::size_t top, bool all) {
  std::vector<Row> rows;
  std::set<const BenchFigureChange*> listed;
  for (const compare::BenchRegression& r : diff.regressions) {
    const BenchCaseChange& c = diff.matched[r.change];
    rows.push_back({&c, &c.figures[r.figure], true});
    listed.insert(&c.figures[r.figure]);
  }
  std::vector<Row> others;
  for (const BenchCaseChange& c : diff.matched)
    for (const BenchFigureChange& f : c.figures)
      if (!listed.count(&f) && (significant(f) || all)) others.push_back({&c, &f, false});
  if (!all)
    std::stable_sort(others.begin(), others.end(), [](const Row& a, const Row& b) {
      const bool a_worse = a.figure->verdict == BenchVerdict::kWorse;
      const bool b_worse = b.figure->verdict == BenchVerdict::kWorse;
      if (a_worse != b_worse) return a_worse;
      return distance(*a.figure) > distance(*b.figure);
    });
  for (const Row& row : others) {
    listed.insert(row.figure);
    rows.push_back(row);
  }
  if (all) return rows;
  std::size_t added = 0;
  for (const BenchCaseChange& c : diff.matched) {
    if (added == top) break;
    if (c.figures.empty() || listed.count(&c.figures.front())) continue;
    rows.push_back({&c, &c.figures.front(), false});
    ++added;
  }
  return rows;
}

}  // namespace lockscope::bench_diff_wording
