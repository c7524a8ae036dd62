#include "report/diff_wording.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "analysis/duration_format.h"

namespace lockscope::diff_wording {

using compare::Comparison;
using compare::Direction;
using compare::EntityChange;
using compare::EntityKind;
using compare::Metric;
using compare::MetricChange;

namespace {

std::string runs_text(const Comparison& diff) {
  return fmt::format("{}+{} runs", diff.base_runs, diff.changed_runs);
}

// How far from "no change" a row is: regressions first, then the largest factor either way.
double distance(const MetricChange& change) {
  if (!change.ratio) return 0;
  return std::abs(std::log(std::max(change.ratio->ratio, 1e-300)));
}

// A factor in three significant digits without an exponent: 0.0452, 1.77, 22.1, 3940.
std::string factor(double value) {
  if (value >= 100) return fmt::format("{:.0f}", value);
  return fmt::format("{:.3g}", value);
}

}  // namespace

std::string percent(double fraction) {
  const double p = fraction * 100;
  if (std::abs(p) < 0.05) return "0 %";
  return fmt::format("{}{:.1f} %", p > 0 ? "+" : "−", std::abs(p));
}

std::string p_value(double p) {
  if (p < 0.0001) return "p<0.0001";
  return fmt::format("p={:.{}f}", p, p < 0.001 ? 4 : 3);
}

std::string ratio(const compare::RatioEstimate& estimate) {
  return fmt::format("×{} [{}–{}]", factor(estimate.ratio), factor(estimate.low),
                     factor(estimate.high));
}

std::string markdown_cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string figure(Metric metric, double value) {
  if (std::isnan(value)) return "–";
  if (compare::metric_is_time(metric)) return format_duration_ns(value);
  return format_count(static_cast<uint64_t>(std::llround(value)));
}

std::string spread(Metric metric, const compare::Spread& spread) {
  if (spread.count == 0) return "–";
  if (spread.count == 1 || spread.min == spread.max) return figure(metric, spread.median);
  return fmt::format("{} [{}–{}]", figure(metric, spread.median), figure(metric, spread.min),
                     figure(metric, spread.max));
}

std::string change(const MetricChange& change) {
  if (change.base.count == 0 || change.changed.count == 0) return "–";
  const double fraction = change.change();
  if (std::isnan(fraction)) return change.changed.median > 0 ? "from 0" : "0 %";
  return percent(fraction);
}

std::string ratio(const MetricChange& change) {
  if (!change.ratio) return "";
  return ratio(*change.ratio);
}

std::string significance(const MetricChange& change) {
  switch (change.direction) {
    case Direction::kHigher:
    case Direction::kLower:
      return p_value(change.test->p_value);
    case Direction::kSame:
      return "~ (" + p_value(change.test->p_value) + ")";
    case Direction::kTooFewRuns:
      return "n too small";
    case Direction::kNoValue:
      return "no value";
  }
  return "";
}

bool one_process(const Comparison& diff) {
  return diff.processes <= 1;
}

std::string entity_name(const Comparison& diff, const compare::EntityRuns& entity) {
  const std::string process = one_process(diff) ? "" : entity.process + ": ";
  switch (entity.kind) {
    case EntityKind::kProgram:
      return "program";
    case EntityKind::kProcess:
      return entity.process;
    case EntityKind::kLock:
      return process + entity.lock;
    case EntityKind::kSite:
      return process + entity.lock + " at " + entity.site;
  }
  return entity.key;
}

std::string verdict(const Comparison& diff) {
  if (diff.matched.empty() || diff.matched.front().entity().kind != EntityKind::kProgram)
    return "No lock figures to compare";
  const MetricChange& wait = diff.matched.front().of(Metric::kWaitNs);
  const std::string figures = fmt::format("{} → {}", figure(Metric::kWaitNs, wait.base.median),
                                          figure(Metric::kWaitNs, wait.changed.median));
  switch (wait.direction) {
    case Direction::kHigher:
    case Direction::kLower:
      return fmt::format("Lock waits {} {}, significant ({}, {}, {})",
                         fmt::format("{:.1f} %", std::abs(wait.change()) * 100),
                         wait.direction == Direction::kHigher ? "higher" : "lower", figures,
                         p_value(wait.test->p_value), runs_text(diff));
    case Direction::kSame:
      return fmt::format("Lock waits: no significant change ({}, {}, {})", figures,
                         p_value(wait.test->p_value), runs_text(diff));
    case Direction::kTooFewRuns:
      return fmt::format(
          "Lock waits {} ({}): not tested, {} (a test needs {} a side: record "
          "--repeat {})",
          change(wait), figures, runs_text(diff), compare::kMinRunsForTest,
          compare::kMinRunsForTest);
    case Direction::kNoValue:
      return "Lock waits: no value on a side";
  }
  return "";
}

std::string gate_line(const Comparison& diff) {
  std::string rules;
  for (const compare::GateRule& rule : diff.rules) rules += (rules.empty() ? "" : ", ") + rule.text;
  if (!diff.tested)
    return fmt::format("not judged ({}: a regression needs {} runs a side to be shown)",
                       runs_text(diff), compare::kMinRunsForTest);
  if (diff.regressions.empty()) return fmt::format("passed ({})", rules);
  return fmt::format("FAILED: {} regression{} ({})", diff.regressions.size(),
                     diff.regressions.size() == 1 ? "" : "s", rules);
}

std::vector<Row> listed_rows(const Comparison& diff, std::size_t top, bool all) {
  // With one process, its row is the program's.
  const bool skip_processes = one_process(diff);
  auto shown = [&](const EntityChange& e) {
    return !(skip_processes && e.entity().kind == EntityKind::kProcess);
  };
  std::vector<Row> rows;
  std::set<std::pair<const EntityChange*, Metric>> listed;
  for (const compare::Regression& r : diff.regressions) {
    const Row row{&diff.matched[r.change], diff.rules[r.rule].metric, true};
    if (listed.insert({row.entity, row.metric}).second) rows.push_back(row);
  }
  std::vector<Row> significant;
  for (const EntityChange& entity : diff.matched)
    for (Metric metric : compare::kMetrics) {
      const Direction d = entity.of(metric).direction;
      if ((d == Direction::kHigher || d == Direction::kLower || all) && shown(entity) &&
          !listed.count({&entity, metric}))
        significant.push_back({&entity, metric, false});
    }
  if (!all)
    std::stable_sort(significant.begin(), significant.end(), [](const Row& a, const Row& b) {
      return distance(a.entity->of(a.metric)) > distance(b.entity->of(b.metric));
    });
  for (const Row& row : significant) {
    listed.insert({row.entity, row.metric});
    rows.push_back(row);
  }
  if (all) return rows;
  std::vector<const EntityChange*> busiest;
  for (const EntityChange& entity : diff.matched)
    if (entity.entity().kind != EntityKind::kSite && shown(entity)) busiest.push_back(&entity);
  auto most = [](const EntityChange* e) {
    const MetricChange& wait = e->of(Metric::kWaitNs);
    return std::max(wait.base.count ? wait.base.median : 0,
                    wait.changed.count ? wait.changed.median : 0);
  };
  std::stable_sort(busiest.begin(), busiest.end(),
                   [&](const EntityChange* a, const EntityChange* b) { return most(a) > most(b); });
  std::size_t added = 0;
  for (const EntityChange* entity : busiest) {
    if (added == top) break;
    if (most(entity) <= 0 || !listed.insert({entity, Metric::kWaitNs}).second) continue;
    rows.push_back({entity, Metric::kWaitNs, false});
    ++added;
  }
  return rows;
}

}  // namespace lockscope::diff_wording
