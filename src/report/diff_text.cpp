// `lockscope diff`'s text: the verdict and the gate first (what a CI log's reader looks for),
// then the findings that came or went, then one table of the changes, then what is on one side
// only.
#include <fmt/core.h>

#include "report/diff_report.h"
#include "report/diff_wording.h"
#include "report/text_table.h"

namespace lockscope {
namespace {

using compare::Comparison;
using compare::EntityRuns;
namespace words = diff_wording;

void write_findings(const Comparison& diff, std::ostream& out) {
  auto list = [&](const char* heading, const std::vector<compare::FindingChange>& findings) {
    if (findings.empty()) return;
    out << "\n" << heading << "\n";
    for (const compare::FindingChange& f : findings)
      out << fmt::format("  {} (base: {}/{} runs, new: {}/{} runs)\n", f.finding->title,
                         f.base_runs, diff.base_runs, f.changed_runs, diff.changed_runs);
  };
  list("Findings that appeared:", diff.findings_appeared);
  list("Findings that went away:", diff.findings_gone);
}

void write_rows(const Comparison& diff, const DiffOptions& options, std::ostream& out) {
  const std::vector<words::Row> rows = words::listed_rows(diff, options.top, options.all);
  if (rows.empty()) return;
  TextTable table;
  table.set_header({"", "what", "figure", "base", "new", "change", "new/base [95 %]", "test"},
                   {true, true, true, false, false, false, true, true});
  for (const words::Row& row : rows) {
    const compare::MetricChange& change = row.entity->of(row.metric);
    table.add_row({row.regression ? "!" : "", words::entity_name(diff, row.entity->entity()),
                   std::string(compare::metric_name(row.metric)),
                   words::figure(row.metric, change.base.median),
                   words::figure(row.metric, change.changed.median), words::change(change),
                   words::ratio(change), words::significance(change)});
  }
  table.fit_within(kReportWidth, 1, CellFit::kCutMiddle);
  out << "\nChanges (medians over runs; new/base with its 95 % interval; ! a regression):\n";
  table.write(out, "  ");
}

void write_one_side(const Comparison& diff, const char* heading,
                    const std::vector<const EntityRuns*>& entities, std::size_t top,
                    std::ostream& out) {
  std::size_t listed = 0;
  for (const EntityRuns* entity : entities) {
    if (entity->kind == compare::EntityKind::kSite) continue;
    if (listed++ == 0) out << "\n" << heading << "\n";
    if (listed > top) {
      out << "  …\n";
      break;
    }
    const compare::Spread wait = compare::spread_of(entity->of(compare::Metric::kWaitNs));
    const compare::Spread acquired = compare::spread_of(entity->of(compare::Metric::kAcquisitions));
    out << fmt::format("  {}: {} acquisitions, {} waited\n", words::entity_name(diff, *entity),
                       words::figure(compare::Metric::kAcquisitions, acquired.median),
                       words::figure(compare::Metric::kWaitNs, wait.median));
  }
}

}  // namespace

void write_diff_text(const Comparison& diff, const DiffOptions& options, std::ostream& out) {
  out << fmt::format("lockscope diff: base {} ({} run{}), new {} ({} run{})\n", options.base_label,
                     diff.base_runs, diff.base_runs == 1 ? "" : "s", options.changed_label,
                     diff.changed_runs, diff.changed_runs == 1 ? "" : "s");
  out << words::verdict(diff) << "\n";
  out << "Gate: " << words::gate_line(diff) << "\n";
  write_findings(diff, out);
  write_rows(diff, options, out);
  write_one_side(diff, "Only in the new runs:", diff.added, options.top, out);
  write_one_side(diff, "Only in the base runs:", diff.gone, options.top, out);
}

}  // namespace lockscope
