// `lockscope diff -f markdown`: for a pull request's comment or a CI job's summary (GitHub's
// $GITHUB_STEP_SUMMARY, GitLab's MR note). The verdict and the gate as the first lines, the
// changes as a GitHub table, and what is on one side only in a collapsed <details> block.
#include <fmt/core.h>

#include "report/diff_report.h"
#include "report/diff_wording.h"

namespace lockscope {
namespace {

using compare::Comparison;
namespace words = diff_wording;

std::string cell(const std::string& text) {
  return diff_wording::markdown_cell(text);
}

}  // namespace

void write_diff_markdown(const Comparison& diff, const DiffOptions& options, std::ostream& out) {
  const bool failed = diff.tested && !diff.regressions.empty();
  out << fmt::format("### lockscope diff: {}\n\n", failed ? "regression" : "no regression");
  out << fmt::format("**{}**\n\n", cell(words::verdict(diff)));
  out << fmt::format("Gate: {}. Base `{}` ({} runs), new `{}` ({} runs).\n",
                     cell(words::gate_line(diff)), options.base_label, diff.base_runs,
                     options.changed_label, diff.changed_runs);
  auto findings = [&](const char* heading, const std::vector<compare::FindingChange>& list) {
    if (list.empty()) return;
    out << "\n" << heading << "\n\n";
    for (const compare::FindingChange& f : list)
      out << fmt::format("- {} (base {}/{} runs, new {}/{})\n", cell(f.finding->title), f.base_runs,
                         diff.base_runs, f.changed_runs, diff.changed_runs);
  };
  findings("**Findings that appeared**", diff.findings_appeared);
  findings("**Findings that went away**", diff.findings_gone);
  const std::vector<words::Row> rows = words::listed_rows(diff, options.top, options.all);
  if (!rows.empty()) {
    out << "\n| | what | figure | base | new | change | new/base [95 %] | test |\n"
           "|---|---|---|--:|--:|--:|---|---|\n";
    for (const words::Row& row : rows) {
      const compare::MetricChange& change = row.entity->of(row.metric);
      out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", row.regression ? ":x:" : "",
                         cell(words::entity_name(diff, row.entity->entity())),
                         compare::metric_name(row.metric), words::spread(row.metric, change.base),
                         words::spread(row.metric, change.changed), words::change(change),
                         words::ratio(change), words::significance(change));
    }
    out << "\nMedian [min–max] over runs; new/base is the Hodges-Lehmann ratio with its 95 % "
           "interval; the test is Mann-Whitney U (~: not significant).\n";
  }
  auto one_side = [&](const char* heading, const std::vector<const compare::EntityRuns*>& list) {
    std::size_t count = 0;
    for (const compare::EntityRuns* e : list)
      if (e->kind != compare::EntityKind::kSite) ++count;
    if (count == 0) return;
    out << fmt::format("\n<details><summary>{} ({})</summary>\n\n", heading, count);
    for (const compare::EntityRuns* e : list)
      if (e->kind != compare::EntityKind::kSite)
        out << fmt::format(
            "- {}: wait {}\n", cell(words::entity_name(diff, *e)),
            words::figure(compare::Metric::kWaitNs,
                          compare::spread_of(e->of(compare::Metric::kWaitNs)).median));
    out << "\n</details>\n";
  };
  one_side("Only in the new runs", diff.added);
  one_side("Only in the base runs", diff.gone);
}

}  // namespace lockscope
