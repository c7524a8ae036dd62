// `lockscope diff -f json` on two lab results: every matched figure with each side's run values,
// its test and ratio, so that a tool can redo any test; the machines, warnings and gate beside.
// "kind": "bench" tells it from a profile diff (diff_json.cpp).
#include <cmath>
#include <nlohmann/json.hpp>

#include "report/bench_diff_report.h"
#include "report/bench_diff_wording.h"

namespace lockscope {
namespace {

using compare::BenchComparison;
using nlohmann::json;

// The schema version of the bench diff: a tool reading it checks this.
constexpr int kBenchDiffSchemaVersion = 1;

json number(double value) {
  return std::isnan(value) ? json(nullptr) : json(value);
}

json side(const compare::Spread& spread, const std::vector<double>& values) {
  return {{"median", number(spread.median)},
          {"min", number(spread.min)},
          {"max", number(spread.max)},
          {"values", values}};
}

json kind_json(const compare::BenchFigureKind& kind) {
  return {{"unit", kind.unit},
          {"better", kind.better == compare::Better::kHigher ? "higher" : "lower"}};
}

json figure_json(const compare::BenchFigureChange& f) {
  json out = kind_json(*f.base->kind);
  out["base"] = side(f.base_spread, f.base->values);
  out["new"] = side(f.changed_spread, f.changed->values);
  out["change"] = number(f.change());
  out["verdict"] = compare::bench_verdict_name(f.verdict);
  if (f.ratio)
    out["ratio"] = {{"estimate", f.ratio->ratio},
                    {"low", f.ratio->low},
                    {"high", f.ratio->high},
                    {"confidence", f.ratio->confidence}};
  if (f.test)
    out["test"] = {{"u", f.test->u}, {"p_value", f.test->p_value}, {"exact", f.test->exact}};
  return out;
}

json one_side_json(const compare::BenchCase& c) {
  json out = {{"name", bench_diff_wording::case_name(c)},
              {"scenario", c.scenario},
              {"lock", c.lock},
              {"detail", c.detail},
              {"runs", c.runs}};
  for (const compare::BenchFigure& f : c.figures) {
    json figure = kind_json(*f.kind);
    figure.update(side(compare::spread_of(f.values), f.values));
    out["figures"][std::string(f.kind->name)] = figure;
  }
  return out;
}

json results_json(const compare::BenchResults* results, const std::string& label) {
  if (!results) return {{"path", label}};
  return {{"path", label}, {"command", results->command}, {"machine", results->machine}};
}

}  // namespace

void write_bench_diff_json(const BenchComparison& diff, const DiffOptions& options,
                           std::ostream& out) {
  json doc;
  doc["schema"] = "lockscope-bench-diff";
  doc["schema_version"] = kBenchDiffSchemaVersion;
  doc["kind"] = "bench";
  doc["base"] = results_json(diff.base, options.base_label);
  doc["new"] = results_json(diff.changed, options.changed_label);
  doc["alpha"] = diff.alpha;
  doc["tested"] = diff.tested;
  doc["verdict"] = bench_diff_wording::verdict(diff);
  doc["lock_against_lock"] = bench_diff_wording::lock_against_lock(diff);
  doc["warnings"] = diff.warnings;
  doc["skipped"] = diff.skipped;
  json rules = json::array();
  for (const compare::BenchGateRule& rule : diff.rules)
    rules.push_back({{"rule", rule.text},
                     {"figure", rule.figure.empty() ? json(nullptr) : json(rule.figure)},
                     {"min_worsening", rule.min_worsening}});
  json regressions = json::array();
  for (const compare::BenchRegression& r : diff.regressions) {
    const compare::BenchCaseChange& c = diff.matched[r.change];
    regressions.push_back({{"case", bench_diff_wording::case_name(c)},
                           {"figure", c.figures[r.figure].base->kind->name},
                           {"rule", diff.rules[r.rule].text}});
  }
  doc["gate"] = {{"passed", diff.regressions.empty()},
                 {"judged", diff.tested},
                 {"rules", rules},
                 {"regressions", regressions}};
  json matched = json::array();
  for (const compare::BenchCaseChange& c : diff.matched) {
    json item = {{"name", bench_diff_wording::case_name(c)},
                 {"scenario", c.base->scenario},
                 {"base_lock", c.base->lock},
                 {"new_lock", c.changed->lock},
                 {"detail", c.base->detail},
                 {"base_runs", c.base->runs},
                 {"new_runs", c.changed->runs},
                 {"figures", json::object()}};
    for (const compare::BenchFigureChange& f : c.figures)
      item["figures"][std::string(f.base->kind->name)] = figure_json(f);
    matched.push_back(std::move(item));
  }
  doc["matched"] = std::move(matched);
  json added = json::array(), gone = json::array();
  for (const compare::BenchCase* c : diff.added) added.push_back(one_side_json(*c));
  for (const compare::BenchCase* c : diff.gone) gone.push_back(one_side_json(*c));
  doc["only_new"] = std::move(added);
  doc["only_base"] = std::move(gone);
  out << doc.dump(2) << "\n";
}

}  // namespace lockscope
