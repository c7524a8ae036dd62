// The JSON report of a set of runs: every entity of compare::run_metrics() (the program, each
// process, lock and call site), and for each metric every run's value in the runs' order with its
// median, min and max, so that a script can run its own statistics. A value a run does not have
// (a p99 without waits) is null, as are the median, min and max when no run has one.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "report/json_writer.h"
#include "report/run_set_report.h"

namespace lockscope {
namespace {

using compare::EntityKind;

const char* kind_name(EntityKind kind) {
  switch (kind) {
    case EntityKind::kProgram:
      return "program";
    case EntityKind::kProcess:
      return "process";
    case EntityKind::kLock:
      return "lock";
    case EntityKind::kSite:
      return "site";
  }
  return "?";
}

// Counts and nanoseconds are whole numbers, written as integers as the single run's report writes
// them; a median between two runs may be a half; a value a run does not have is null.
void number(JsonWriter& w, double value) {
  if (std::isnan(value))
    w.value(nullptr);
  else if (value >= 0 && value < 0x1p63 && value == std::floor(value))
    w.value(static_cast<uint64_t>(value));
  else
    w.value(value);
}

void entity_value(JsonWriter& w, const compare::EntityRuns& entity) {
  w.begin_object()
      .field("kind", kind_name(entity.kind))
      .field("key", entity.key)
      .field("process", entity.process)
      .field("lock", entity.lock)
      .field("site", entity.site)
      .field("detail", entity.detail);
  if (entity.kind == EntityKind::kLock) w.field("same_name_locks", entity.same_name_locks);
  w.array("present");
  for (bool present : entity.present) w.value(present);
  w.end_array().object("metrics");
  for (compare::Metric metric : compare::kMetrics) {
    const std::vector<double>& values = entity.of(metric);
    const compare::Spread spread = compare::spread_of(values);
    w.object(compare::metric_name(metric)).array("runs");
    for (double value : values) number(w, value);
    w.end_array();
    for (const auto& [name, value] : {std::pair{"median", spread.median},
                                      std::pair{"min", spread.min}, std::pair{"max", spread.max}}) {
      w.key(name);
      number(w, spread.count == 0 ? std::nan("") : value);
    }
    w.field("runs_with_value", spread.count).end_object();
  }
  w.end_object().end_object();
}

}  // namespace

void write_run_set_json(const RunSetReport& report, std::ostream& out) {
  const compare::RunMetrics& metrics = report.metrics;
  JsonWriter w(out, {.indent = 2});
  w.begin_object()
      .field("schema", "lockscope-run-set")
      .field("schema_version", kRunSetJsonVersion)
      .field("directory", report.directory)
      .field("command", report.command)
      .key("runs")
      .values(metrics.runs)
      .array("entities");
  for (const compare::EntityRuns& entity : metrics.entities) entity_value(w, entity);
  w.end_array().array("findings");
  for (const compare::FindingRuns& finding : metrics.findings) {
    w.begin_object()
        .field("key", finding.key)
        .field("rule", finding.rule)
        .field("title", finding.title)
        .array("present");
    for (bool present : finding.present) w.value(present);
    w.end_array()
        .field("runs_with", static_cast<uint64_t>(
                                std::count(finding.present.begin(), finding.present.end(), true)))
        .field("in_at_least_half", shown_in_set(finding))
        .end_object();
  }
  w.end_array().end_object();
  w.finish();
  out << '\n';
}

}  // namespace lockscope
