// `lockscope diff -f json`: everything the comparison holds, each side's every run value included,
// so that a tool can redo any test. Numbers are plain (ns, counts); null where there is no value.
#include <cmath>
#include <nlohmann/json.hpp>

#include "report/diff_report.h"
#include "report/diff_wording.h"

namespace lockscope {
namespace {

using compare::Comparison;
using compare::EntityRuns;
using compare::Metric;
using nlohmann::json;

// The diff's own schema version: a tool reading it checks this.
constexpr int kDiffSchemaVersion = 1;

json number(double value) {
  return std::isnan(value) ? json(nullptr) : json(value);
}

json values_of(const std::vector<double>& values) {
  json list = json::array();
  for (double v : values) list.push_back(number(v));
  return list;
}

json side(const compare::Spread& spread, const std::vector<double>& values) {
  return {{"median", number(spread.median)},
          {"min", number(spread.min)},
          {"max", number(spread.max)},
          {"values", values_of(values)}};
}

const char* kind_name(compare::EntityKind kind) {
  switch (kind) {
    case compare::EntityKind::kProgram:
      return "program";
    case compare::EntityKind::kProcess:
      return "process";
    case compare::EntityKind::kLock:
      return "lock";
    case compare::EntityKind::kSite:
      return "site";
  }
  return "?";
}

json identity(const EntityRuns& entity) {
  json out = {{"key", entity.key}, {"kind", kind_name(entity.kind)}};
  if (!entity.process.empty()) out["process"] = entity.process;
  if (!entity.lock.empty()) out["lock"] = entity.lock;
  if (!entity.site.empty()) out["site"] = entity.site;
  if (!entity.detail.empty()) out["detail"] = entity.detail;
  if (entity.kind == compare::EntityKind::kLock) out["locks"] = entity.same_name_locks;
  return out;
}

json metric_json(const compare::EntityChange& entity, Metric metric) {
  const compare::MetricChange& change = entity.of(metric);
  json out = {{"base", side(change.base, entity.base->of(metric))},
              {"new", side(change.changed, entity.changed->of(metric))},
              {"change", number(change.change())},
              {"direction", compare::direction_name(change.direction)}};
  if (change.ratio)
    out["ratio"] = {{"estimate", change.ratio->ratio},
                    {"low", change.ratio->low},
                    {"high", change.ratio->high},
                    {"confidence", change.ratio->confidence}};
  if (change.test)
    out["test"] = {
        {"u", change.test->u}, {"p_value", change.test->p_value}, {"exact", change.test->exact}};
  return out;
}

json one_side_json(const EntityRuns& entity) {
  json out = identity(entity);
  for (Metric metric : compare::kMetrics) {
    const std::vector<double>& values = entity.of(metric);
    out["metrics"][std::string(compare::metric_name(metric))] =
        side(compare::spread_of(values), values);
  }
  return out;
}

}  // namespace

void write_diff_json(const Comparison& diff, const DiffOptions& options, std::ostream& out) {
  json doc;
  doc["schema"] = "lockscope-diff";
  doc["schema_version"] = kDiffSchemaVersion;
  doc["base"] = {{"path", options.base_label}, {"runs", diff.base_runs}};
  doc["new"] = {{"path", options.changed_label}, {"runs", diff.changed_runs}};
  doc["alpha"] = diff.alpha;
  doc["tested"] = diff.tested;
  doc["verdict"] = diff_wording::verdict(diff);
  json rules = json::array();
  for (const compare::GateRule& rule : diff.rules)
    rules.push_back({{"rule", rule.text},
                     {"metric", compare::metric_name(rule.metric)},
                     {"min_growth", rule.min_growth},
                     {"min_absolute", rule.min_absolute}});
  json regressions = json::array();
  for (const compare::Regression& r : diff.regressions)
    regressions.push_back(
        {{"key", diff.matched[r.change].entity().key}, {"rule", diff.rules[r.rule].text}});
  doc["gate"] = {{"passed", diff.regressions.empty()},
                 {"judged", diff.tested},
                 {"rules", rules},
                 {"regressions", regressions}};
  auto findings = [&](const std::vector<compare::FindingChange>& list) {
    json items = json::array();
    for (const compare::FindingChange& f : list)
      items.push_back({{"key", f.finding->key},
                       {"rule", f.finding->rule},
                       {"title", f.finding->title},
                       {"base_runs", f.base_runs},
                       {"new_runs", f.changed_runs}});
    return items;
  };
  doc["findings"] = {{"appeared", findings(diff.findings_appeared)},
                     {"gone", findings(diff.findings_gone)}};
  json matched = json::array();
  for (const compare::EntityChange& entity : diff.matched) {
    json item = identity(entity.entity());
    for (Metric metric : compare::kMetrics)
      item["metrics"][std::string(compare::metric_name(metric))] = metric_json(entity, metric);
    matched.push_back(std::move(item));
  }
  doc["matched"] = std::move(matched);
  json added = json::array(), gone = json::array();
  for (const EntityRuns* entity : diff.added) added.push_back(one_side_json(*entity));
  for (const EntityRuns* entity : diff.gone) gone.push_back(one_side_json(*entity));
  doc["only_new"] = std::move(added);
  doc["only_base"] = std::move(gone);
  out << doc.dump(2) << "\n";
}

}  // namespace lockscope
