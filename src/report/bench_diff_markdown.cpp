// `lockscope diff -f markdown` on two lab results: for a pull request's comment or a CI job's
// summary, as the profile diff's (diff_markdown.cpp): the verdict and the gate first, the
// warnings as a quote, the changes as a GitHub table, the one-sided cases in <details>.
#include <fmt/core.h>

#include "report/bench_diff_report.h"
#include "report/bench_diff_wording.h"
#include "report/diff_wording.h"

namespace lockscope {
namespace {

using compare::BenchComparison;
namespace words = bench_diff_wording;

std::string cell(const std::string& text) {
  return diff_wording::markdown_cell(text);
}

void one_side(const char* heading, const std::vector<const compare::BenchCase*>& cases,
              std::ostream& out) {
  if (cases.empty()) return;
  out << fmt::format("\n<details><summary>{} ({})</summary>\n\n", heading, cases.size());
  for (const compare::BenchCase* c : cases)
    out << fmt::format("- {} ({} runs)\n", cell(words::case_name(*c)), c->runs);
  out << "\n</details>\n";
}

}  // namespace

void write_bench_diff_markdown(const BenchComparison& diff, const DiffOptions& options,
                               std::ostream& out) {
  out << fmt::format("### lockscope diff of lab results: {}\n\n",
                     diff.regressions.empty() ? "no regression" : "regression");
  for (const std::string& warning : diff.warnings)
    out << "> **Warning:** " << cell(warning) << "\n";
  if (!diff.warnings.empty()) out << "\n";
  out << fmt::format("**{}**\n\n", cell(words::verdict(diff)));
  const std::vector<std::string> lock_lines = words::lock_against_lock(diff);
  for (const std::string& line : lock_lines) out << "- " << cell(line) << "\n";
  if (!lock_lines.empty()) out << "\n";  // else the gate's line would join the list's last item
  out << fmt::format("Gate: {}. Base `{}`, new `{}`.\n", cell(words::gate_line(diff)),
                     options.base_label, options.changed_label);
  for (const std::string& skipped : diff.skipped)
    out << "\nNot compared: " << cell(skipped) << "\n";
  const std::vector<words::Row> rows = words::listed_rows(diff, options.top, options.all);
  if (!rows.empty()) {
    out << "\n| | case | figure | runs | base | new | change | new/base [95 %] | test |\n"
           "|---|---|---|--:|--:|--:|--:|---|---|\n";
    for (const words::Row& row : rows) {
      const compare::BenchFigureChange& f = *row.figure;
      const compare::BenchFigureKind& kind = *f.base->kind;
      out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                         row.regression ? ":x:" : "", cell(words::case_name(*row.case_change)),
                         words::figure_name(kind), words::runs(*row.case_change),
                         words::spread(kind, f.base_spread), words::spread(kind, f.changed_spread),
                         words::change(f), words::ratio(f), words::significance(f));
    }
    out << "\nMedian [min–max] over runs; ↑ higher is better, ↓ lower is better; new/base is the "
           "Hodges-Lehmann ratio with its 95 % interval; the test is Mann-Whitney U (~: not "
           "significant).\n";
  }
  one_side("Only in the new results", diff.added, out);
  one_side("Only in the base results", diff.gone, out);
}

}  // namespace lockscope
