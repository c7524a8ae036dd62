// The text report of a set of runs: a header naming the set, the program's (and each process's)
// figures, the locks by median wait, and the findings most runs had. Every figure is
// "median [min–max]" over the runs, as the seed reports put ten runs of one benchmark.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "analysis/duration_format.h"
#include "report/diff_wording.h"
#include "report/run_set_report.h"
#include "report/text_table.h"

namespace lockscope {
namespace {

using compare::EntityKind;
using compare::EntityRuns;
using compare::Metric;

constexpr const char* kMetricHeaders[] = {"ACQUISITIONS", "CONTENDED", "WAIT", "WAIT P99", "HOLD"};
static_assert(std::size(kMetricHeaders) == compare::kMetricCount);

constexpr std::size_t kWidth = 120;  // as the single run's tables

// "10,000 [9,990–10,000]", "10,000" when every run had it; "-" when no run has a value (a p99
// without waits). A percentile over fewer runs than the set's says over how many.
std::string cell(const EntityRuns& entity, Metric metric, std::size_t runs) {
  const compare::Spread spread = compare::spread_of(entity.of(metric));
  if (spread.count == 0) return "-";
  std::string text = diff_wording::spread(metric, spread);
  if (spread.count < runs) text += fmt::format(" ({}/{})", spread.count, runs);
  return text;
}

double median_of(const EntityRuns& entity, Metric metric) {
  const compare::Spread spread = compare::spread_of(entity.of(metric));
  return spread.count == 0 ? 0 : spread.median;
}

// The name last, where a long one wraps under its column instead of being cut: the figures'
// "median [min–max]" cells take most of the width.
void write_table(const char* name_header, const std::vector<const EntityRuns*>& rows,
                 const std::vector<std::string>& names, std::size_t runs, std::ostream& out) {
  TextTable table;
  std::vector<std::string> header;
  std::vector<bool> left;
  for (const char* title : kMetricHeaders) {
    header.push_back(title);
    left.push_back(false);
  }
  header.push_back(name_header);
  left.push_back(true);
  table.set_header(header, left);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::vector<std::string> cells;
    for (Metric metric : compare::kMetrics) cells.push_back(cell(*rows[i], metric, runs));
    cells.push_back(names[i]);
    table.add_row(std::move(cells));
  }
  table.fit_within(kWidth, compare::kMetricCount, CellFit::kWrap);
  table.write(out);
  out << '\n';
}

}  // namespace

bool shown_in_set(const compare::FindingRuns& finding) {
  const auto runs_with = std::count(finding.present.begin(), finding.present.end(), true);
  return runs_with > 0 && 2 * static_cast<std::size_t>(runs_with) >= finding.present.size();
}

void write_run_set_text(const RunSetReport& report, const RunSetTextOptions& options,
                        std::ostream& out) {
  const compare::RunMetrics& metrics = report.metrics;
  const std::size_t runs = metrics.runs.size();
  out << fmt::format("{} run{} of {}\n", runs, runs == 1 ? "" : "s", report.command);
  const std::string where =
      runs == 1 ? fmt::format("{}/1", report.directory)
                : fmt::format("{}/1 … {}/{}", report.directory, report.directory, runs);
  out << fmt::format(
      "each figure: median [min–max] over the runs in {} (one value: the same in every run)\n"
      "one run's full report: lockscope report {}/K\n\n",
      where, report.directory);

  // The program, and its processes when it had more than one (with one, its row is the
  // program's).
  std::vector<const EntityRuns*> processes;
  const EntityRuns* program = nullptr;
  std::vector<const EntityRuns*> locks;
  for (const EntityRuns& entity : metrics.entities) {
    if (entity.kind == EntityKind::kProgram) program = &entity;
    if (entity.kind == EntityKind::kProcess) processes.push_back(&entity);
    if (entity.kind == EntityKind::kLock) locks.push_back(&entity);
  }
  std::vector<const EntityRuns*> rows;
  std::vector<std::string> names;
  if (processes.size() == 1) {
    rows.push_back(processes.front());
    names.push_back(processes.front()->process);
  } else {
    if (program) {
      rows.push_back(program);
      names.push_back(fmt::format("program ({} processes)", processes.size()));
    }
    for (const EntityRuns* process : processes) {
      rows.push_back(process);
      names.push_back(process->process);
    }
  }
  out << "*** Program ***\n";
  write_table("PROCESS", rows, names, runs, out);

  std::stable_sort(locks.begin(), locks.end(), [](const EntityRuns* a, const EntityRuns* b) {
    return median_of(*a, Metric::kWaitNs) > median_of(*b, Metric::kWaitNs);
  });
  const std::size_t total = locks.size();
  if (!options.all && locks.size() > options.top) locks.resize(options.top);
  if (total == 0) {
    out << "*** Locks: none (the program took no lock in any run) ***\n\n";
  } else {
    out << fmt::format("*** Locks: {} of {} by median WAIT ***\n", locks.size(), total);
    names.clear();
    // With several processes a lock's name alone may be ambiguous: its key names the process.
    for (const EntityRuns* lock : locks)
      names.push_back(processes.size() > 1 ? lock->lock + " (" + lock->process + ")" : lock->lock);
    write_table("LOCK", locks, names, runs, out);
  }

  std::vector<const compare::FindingRuns*> findings;
  for (const compare::FindingRuns& finding : metrics.findings)
    if (shown_in_set(finding)) findings.push_back(&finding);
  if (findings.empty()) {
    out << "*** Findings: none in at least half of the runs ***\n";
    return;
  }
  out << "*** Findings in at least half of the runs ***\n";
  for (const compare::FindingRuns* finding : findings) {
    const auto runs_with = std::count(finding->present.begin(), finding->present.end(), true);
    out << fmt::format("  {}: {} (in {}/{} runs)\n", finding->rule, finding->title, runs_with,
                       runs);
  }
}

}  // namespace lockscope
