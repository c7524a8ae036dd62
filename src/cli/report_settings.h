// What `run` and `report` share: the report's options (-f, --sort, --top, --caller-depth, ...),
// and writing the report of a profile directory with them.
#pragma once

#include <string>
#include <vector>

#include "report/report_writer.h"

namespace CLI {
class App;
}

namespace lockscope {

struct ReportSettings {
  // Where the command takes them: `report` (-o FILE, else stdout), `run` (--report FILE, else
  // stderr); the errors name the command and its option.
  std::string command = "report";
  std::string output_option = "-o";
  bool to_stderr = false;
  std::string format;  // empty: from the output's extension, else text (check_report_settings)
  std::string output;  // empty: stdout (report) / stderr (run)
  ReportOptions options;
  bool attribute_waits = false;  // --caller-depth or --skip-frames given
  unsigned caller_depth = 0;
  std::string skip_frames;
  std::vector<std::string> format_options;  // the format-specific options given ("--weight")
};

void add_report_options(CLI::App& app, ReportSettings& settings);
// Settles the format (-f, else the report file's extension, else text) and refuses what could not
// be written as asked, before anything runs (`run` checks before it starts the program, so that
// the run is not lost): an extension no format has, an option the format does not read, a
// binary format to a terminal. Throws CliError.
void check_report_settings(ReportSettings& settings);
// Reads and symbolizes the profile in `directory`; throws CliError when it holds no readable
// profile (its damaged files are left in Profile::problems).
Profile read_symbolized_profile(const std::string& directory);
// Reads, symbolizes and writes the profile in `directory` as the checked `settings` say: to the
// report file, else to stderr (`run`) or stdout. Throws CliError.
void write_report(const std::string& directory, const ReportSettings& settings);

}  // namespace lockscope
