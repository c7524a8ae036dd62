// `lockscope diff BASE NEW`: two profiles or two sets of repeated runs, compared lock by lock
// (analysis/compare/), written as text, markdown, JSON or an html page; the exit status is the CI
// gate's.
#include "cli/diff_command.h"

#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>

#include "analysis/compare/run_comparison.h"
#include "analysis/compare/stack_diff.h"
#include "cli/bench_diff.h"
#include "cli/cli_error.h"
#include "cli/cli_parse.h"
#include "cli/report_settings.h"
#include "cli/run_set_loading.h"
#include "report/diff_report.h"

namespace lockscope {
namespace {

struct DiffSettings {
  std::string base;
  std::string changed;
  std::string format;  // empty: from -o's extension, else text
  std::string output;
  std::vector<std::string> fail_on;
  bool sites = false;
  DiffOptions options;
  double alpha = compare::kDefaultAlpha;
};

std::string format_of(const DiffSettings& settings) {
  if (!settings.format.empty()) return settings.format == "md" ? "markdown" : settings.format;
  const std::string extension = std::filesystem::path(settings.output).extension().string();
  if (extension == ".json") return "json";
  if (extension == ".md" || extension == ".markdown") return "markdown";
  if (extension == ".html" || extension == ".htm") return "html";
  return "text";
}

// `stacks`: the html page's flame graph (empty for the other formats).
void write(const compare::Comparison& diff, const compare::StackDiff& stacks,
           const DiffSettings& settings, std::ostream& out) {
  const std::string format = format_of(settings);
  if (format == "html")
    write_diff_html(diff, stacks, settings.options, out);
  else if (format == "json")
    write_diff_json(diff, settings.options, out);
  else if (format == "markdown")
    write_diff_markdown(diff, settings.options, out);
  else
    write_diff_text(diff, settings.options, out);
}

// Written whole to a file beside it, then renamed over FILE: a failed write leaves no half diff.
void write_file(const DiffSettings& settings, const std::function<void(std::ostream&)>& render) {
  const std::string partial = settings.output + ".partial";
  {
    std::ofstream file(partial);
    if (!file)
      throw CliError(
          fmt::format("diff: cannot write '{}': {}", settings.output, std::strerror(errno)));
    render(file);
    file.flush();
    if (!file) {
      std::filesystem::remove(partial);
      throw CliError(fmt::format("diff: cannot write '{}'", settings.output));
    }
  }
  std::error_code error;
  std::filesystem::rename(partial, settings.output, error);
  if (error) {
    std::filesystem::remove(partial);
    throw CliError(fmt::format("diff: cannot write '{}': {}", settings.output, error.message()));
  }
}

int diff(const std::vector<std::string>& args) {
  CLI::App app(
      "Compare two profiles, or two sets of runs (record --repeat N), lock by lock, or two lab "
      "results (bench --json) case by case; exit 1 when something regressed",
      "lockscope diff");
  DiffSettings settings;
  app.add_option("base", settings.base,
                 "the BASE: a profile directory, a set of runs, or a `lockscope bench --json` file")
      ->required();
  app.add_option("new", settings.changed, "the NEW runs, as BASE")->required();
  app.add_option("-f,--format", settings.format, "text (default), markdown (md), json or html")
      ->check(CLI::IsMember({"text", "markdown", "md", "json", "html"}));
  app.add_option("-o,--output", settings.output,
                 "write to FILE (.json, .md, .html pick the format; `-`: stdout)");
  app.add_option("--fail-on", settings.fail_on,
                 "what counts as a regression: METRIC[:+PERCENT%][:AMOUNT], several allowed "
                 "(METRIC: acquisitions, contended, wait, wait_p99, hold; AMOUNT in ns, us, ms, "
                 "s for times); default wait:+10%:1ms. Lab results: FIGURE[:PERCENT%], how much "
                 "worse (iterations_per_ms:-5%, round_trip_ns:+5%, any:5%); default any:10%");
  app.add_flag("--sites", settings.sites, "also compare each lock's call sites");
  app.add_option("--top", settings.options.top, "locks listed beyond the significant changes")
      ->default_str("10");
  app.add_flag("--all", settings.options.all, "every figure of every matched lock and process");
  app.add_option("--alpha", settings.alpha, "significance level of the tests")
      ->check(CLI::Range(0.0001, 0.5))
      ->default_str("0.05");
  app.footer(
      "Figures are matched by process, lock name and call site, never by address. A change is "
      "tested (Mann-Whitney U) when both sides have 5 runs or more; a regression also needs its "
      "95 % interval past the threshold.\nExit status: 0 nothing regressed, 1 a regression, 2 "
      "an error.");
  try {
    parse_command_line(app, args);
  } catch (const CLI::CallForHelp&) {
    return 0;
  }
  auto emit = [&](const std::function<void(std::ostream&)>& render) {
    if (settings.output.empty() || settings.output == "-")
      render(std::cout);
    else
      write_file(settings, render);
  };
  settings.options.base_label = settings.base;
  settings.options.changed_label = settings.changed;
  if (are_bench_results(settings.base, settings.changed)) {
    if (settings.sites)
      throw CliError("diff: --sites compares the call sites of profiles; lab results have none");
    if (format_of(settings) == "html")
      throw CliError("diff: the html page draws profiles' call stacks; lab results have none",
                     "compare lab results as text, markdown or json");
    const auto bench =
        compare_bench_files(settings.base, settings.changed, settings.fail_on, settings.alpha);
    emit([&](std::ostream& out) {
      write_bench_diff(*bench, format_of(settings), settings.options, out);
    });
    return bench->comparison.regressions.empty() ? 0 : kExitRegression;
  }
  std::vector<compare::GateRule> rules;
  for (const std::string& text : settings.fail_on) {
    try {
      rules.push_back(compare::parse_gate_rule(text));
    } catch (const std::invalid_argument& error) {
      throw CliError(fmt::format("diff: {}", error.what()), "see `lockscope diff --help`");
    }
  }
  if (rules.empty()) rules.push_back(compare::default_gate_rule());
  // As `report -f html`: a page of some hundred KB is for a browser; it would flood a terminal.
  if (format_of(settings) == "html" && (settings.output.empty() || settings.output == "-") &&
      isatty(STDOUT_FILENO))
    throw CliError("diff: refusing to write html to a terminal (a page for a browser)",
                   "write it to a file: -o diff.html");
  const LoadedRuns base = load_runs(settings.base);
  const LoadedRuns changed = load_runs(settings.changed);
  const compare::RunMetrics base_table = compare::run_metrics(base.pointers(), settings.sites);
  const compare::RunMetrics changed_table =
      compare::run_metrics(changed.pointers(), settings.sites);
  const compare::Comparison comparison =
      compare::compare_runs(base_table, changed_table, std::move(rules), settings.alpha);
  // The flame graph's stacks need the runs themselves, which the comparison does not keep.
  const compare::StackDiff stacks = format_of(settings) == "html"
                                        ? compare::stack_diff(base.pointers(), changed.pointers())
                                        : compare::StackDiff{};
  emit([&](std::ostream& out) { write(comparison, stacks, settings, out); });
  return comparison.tested && !comparison.regressions.empty() ? kExitRegression : 0;
}

}  // namespace

int run_diff_command(const std::vector<std::string>& args) {
  try {
    return diff(args);
  } catch (const CliError& error) {  // the gate's caller tells an error from a regression
    throw CliError(error.what(), error.hint(), kExitDiffError);
  }
}

}  // namespace lockscope
