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
  std::string format;  // empty: from the output's extension, else text
  std::string output;  // empty: stdout (report) / stderr (run)
  ReportOptions options;
  bool attribute_waits = false;  // --caller-depth or --skip-frames given
  unsigned caller_depth = 0;
  std::string skip_frames;
  std::vector<std::string> format_options;  // the format-specific options given ("--weight")
};

void add_report_options(CLI::App& app, ReportSettings& settings);
// Reads, symbolizes and writes the profile in `directory` as `settings` say: to -o's file, else
// to stderr (`run`) or stdout. Throws CliError.
void write_report(const std::string& directory, const ReportSettings& settings, bool to_stderr);

}  // namespace lockscope
