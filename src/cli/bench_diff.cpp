#include "cli/bench_diff.h"

#include <fmt/core.h>

#include <filesystem>
#include <stdexcept>

#include "cli/cli_error.h"
#include "report/bench_diff_report.h"
#include "report/bench_diff_wording.h"

namespace lockscope {
namespace {

// "mutex pthread, 1 thread; condvar" (at most three, then "…"), or what was skipped.
std::string contents(const compare::BenchResults& results) {
  std::string text;
  for (std::size_t i = 0; i < results.cases.size(); ++i) {
    if (i == 3) return text + "; …";
    text += (i ? "; " : "") + bench_diff_wording::case_name(results.cases[i]);
  }
  for (const std::string& skipped : results.skipped) text += (text.empty() ? "" : "; ") + skipped;
  return text.empty() ? "nothing" : text;
}

}  // namespace

bool are_bench_results(const std::string& base, const std::string& changed) {
  namespace fs = std::filesystem;
  std::error_code error;
  const bool base_file = fs::is_regular_file(base, error);
  const bool changed_file = fs::is_regular_file(changed, error);
  if (!base_file && !changed_file) return false;
  const std::string& directory = base_file ? changed : base;
  if (fs::is_directory(directory, error))
    throw CliError(
        fmt::format("diff: '{}' is a file and '{}' a directory: compare two lab results or two "
                    "profiles, not one of each",
                    base_file ? base : changed, directory),
        "a file is a `lockscope bench --json` result; a directory a profile or a set of runs");
  return true;
}

std::unique_ptr<BenchDiff> compare_bench_files(const std::string& base, const std::string& changed,
                                               const std::vector<std::string>& fail_on,
                                               double alpha) {
  std::vector<compare::BenchGateRule> rules;
  try {
    for (const std::string& text : fail_on) rules.push_back(compare::parse_bench_gate_rule(text));
  } catch (const std::invalid_argument& error) {
    throw CliError(fmt::format("diff: {}", error.what()),
                   "lab results take --fail-on FIGURE[:PERCENT%], e.g. iterations_per_ms:-5%");
  }
  if (rules.empty()) rules.push_back(compare::default_bench_gate_rule());
  auto diff = std::make_unique<BenchDiff>();
  try {
    diff->base = compare::read_bench_results(base);
    diff->changed = compare::read_bench_results(changed);
  } catch (const std::invalid_argument& error) {
    throw CliError(fmt::format("diff: {}", error.what()),
                   "give two files written by `lockscope bench SCENARIO --json FILE`");
  }
  diff->comparison = compare::compare_bench(diff->base, diff->changed, std::move(rules), alpha);
  if (diff->comparison.matched.empty())
    throw CliError(fmt::format("diff: '{}' and '{}' have no lab case in common (base: {}; new: {})",
                               base, changed, contents(diff->base), contents(diff->changed)),
                   "compare results of one scenario, run with the same thread counts");
  return diff;
}

void write_bench_diff(const BenchDiff& diff, const std::string& format, const DiffOptions& options,
                      std::ostream& out) {
  if (format == "json")
    write_bench_diff_json(diff.comparison, options, out);
  else if (format == "markdown")
    write_bench_diff_markdown(diff.comparison, options, out);
  else
    write_bench_diff_text(diff.comparison, options, out);
}

}  // namespace lockscope
