// `lockscope diff`'s text on two lab results: what may make them incomparable (another machine,
// build or parameters) first, then the verdict, the lab's own sentence for a lock against a lock,
// the gate, one table of the changes, and the cases on one side only.
#include <fmt/core.h>

#include "report/bench_diff_report.h"
#include "report/bench_diff_wording.h"
#include "report/text_table.h"

namespace lockscope {
namespace {

using compare::BenchComparison;
namespace words = bench_diff_wording;

// The runs column only when cases differ in runs (`all` makes 3 of mutex, 10 of condvar): else
// the verdict's "5+5 runs" says it, and the table keeps within the report's width.
bool runs_differ(const BenchComparison& diff) {
  for (const compare::BenchCaseChange& c : diff.matched)
    if (words::runs(c) != words::runs(diff.matched.front())) return true;
  return false;
}

void write_rows(const BenchComparison& diff, const DiffOptions& options, std::ostream& out) {
  const std::vector<words::Row> rows = words::listed_rows(diff, options.top, options.all);
  if (rows.empty()) return;
  const bool with_runs = runs_differ(diff);
  TextTable table;
  std::vector<std::string> header = {"", "case", "figure"};
  std::vector<bool> left = {true, true, true};
  if (with_runs) header.push_back("runs"), left.push_back(false);
  header.insert(header.end(), {"base", "new", "change", "new/base [95 %]", "test"});
  left.insert(left.end(), {false, false, false, true, true});
  table.set_header(header, left);
  for (const words::Row& row : rows) {
    const compare::BenchFigureChange& f = *row.figure;
    const compare::BenchFigureKind& kind = *f.base->kind;
    std::vector<std::string> cells = {row.regression ? "!" : "", words::case_name(*row.case_change),
                                      words::figure_name(kind)};
    if (with_runs) cells.push_back(words::runs(*row.case_change));
    cells.insert(cells.end(), {words::value(kind, f.base_spread.median),
                               words::value(kind, f.changed_spread.median), words::change(f),
                               words::ratio(f), words::significance(f)});
    table.add_row(std::move(cells));
  }
  table.fit_within(kReportWidth, 1, CellFit::kCutMiddle);
  out << "\nChanges (medians over runs; new/base with its 95 % interval; ↑ higher is better, ↓ "
         "lower is better; ! a regression):\n";
  table.write(out, "  ");
}

void write_one_side(const char* heading, const std::vector<const compare::BenchCase*>& cases,
                    std::ostream& out) {
  if (cases.empty()) return;
  out << "\n" << heading << "\n";
  for (const compare::BenchCase* c : cases) {
    std::string figure;
    if (!c->figures.empty()) {
      const compare::BenchFigure& first = c->figures.front();
      figure = fmt::format(": {} {}", first.kind->name,
                           words::value(*first.kind, compare::spread_of(first.values).median));
    }
    out << fmt::format("  {} ({} run{}){}\n", words::case_name(*c), c->runs,
                       c->runs == 1 ? "" : "s", figure);
  }
}

}  // namespace

void write_bench_diff_text(const BenchComparison& diff, const DiffOptions& options,
                           std::ostream& out) {
  out << fmt::format("lockscope diff of lab results: base {}, new {}\n", options.base_label,
                     options.changed_label);
  for (const std::string& warning : diff.warnings) out << "warning: " << warning << "\n";
  out << words::verdict(diff) << "\n";
  for (const std::string& line : words::lock_against_lock(diff)) out << "  " << line << "\n";
  out << "Gate: " << words::gate_line(diff) << "\n";
  for (const std::string& skipped : diff.skipped) out << "Not compared: " << skipped << "\n";
  write_rows(diff, options, out);
  write_one_side("Only in the new results:", diff.added, out);
  write_one_side("Only in the base results:", diff.gone, out);
}

}  // namespace lockscope
