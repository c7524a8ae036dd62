#include "cli/run_set_report.h"

#include <fmt/core.h>

#include <iostream>
#include <vector>

#include "analysis/compare/run_metrics.h"
#include "cli/cli_error.h"
#include "cli/run_set_loading.h"
#include "report/lock_rows.h"
#include "report/report_file.h"
#include "report/run_set_report.h"

namespace lockscope {
namespace {

// The same option for one run of the set: `lockscope report DIR/K --brief`.
std::string one_run_hint(const std::string& directory, const std::string& option) {
  return fmt::format("one run of the set: lockscope report {}/K {}", directory, option);
}

// The command line of the set's program, as its first run's first process had it.
std::string command_of(const Profile& first_run) {
  if (first_run.processes.empty()) return "?";
  const ProcessProfile& process = first_run.processes.front();
  std::string text;
  for (const std::string& argument : process.arguments) {
    if (!text.empty()) text += ' ';
    text += argument;
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text.empty() ? process.executable : text;
}

}  // namespace

void check_run_set_report_settings(const ReportSettings& settings, const std::string& directory) {
  if (settings.format != "text" && settings.format != "json")
    throw CliError(
        fmt::format("{}: a set of runs reports as text or json, not {}; one run of it in any "
                    "format: lockscope report {}/K -f {}",
                    settings.command, settings.format, directory, settings.format),
        "K is the run's number, 1 to N");
  std::string option;
  if (!settings.format_options.empty()) option = settings.format_options.front();
  if (settings.attribute_waits) option = "--caller-depth N / --skip-frames REGEX";
  if (settings.options.sort_key != kDefaultSortKey)
    option = fmt::format("--sort {}", settings.options.sort_key);
  if (!option.empty())
    throw CliError(fmt::format("{}: {} shapes one run's report, not a set's (locks by median wait)",
                               settings.command, option),
                   one_run_hint(directory, option));
}

void write_run_set_report(const std::string& directory, const ReportSettings& settings) {
  const LoadedRuns set = load_runs(directory);
  const std::vector<const Profile*> runs = set.pointers();
  // Call sites are the JSON's alone: the text shows the program, processes and locks.
  const bool json = settings.format == "json";
  const compare::RunMetrics metrics = compare::run_metrics(runs, /*sites=*/json);
  const RunSetReport report{metrics, directory, command_of(set.runs.front())};
  const RunSetTextOptions text_options{settings.options.top, settings.options.all};
  auto write = [&](std::ostream& out) {
    if (json)
      write_run_set_json(report, out);
    else
      write_run_set_text(report, text_options, out);
  };
  if (settings.output.empty() || settings.output == "-") {
    write(settings.to_stderr ? std::cerr : std::cout);
    return;
  }
  try {
    write_report_file([&](ReportSink& sink) { write(sink.stream()); }, settings.output);
  } catch (const ReportFileError& error) {
    throw CliError(error.what(),
                   error.file_problem()
                       ? fmt::format("choose another file with {} FILE", settings.output_option)
                       : "");
  }
}

}  // namespace lockscope
