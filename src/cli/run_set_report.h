// `report DIR` of a set of runs (record --repeat N wrote DIR/1 … DIR/N), and `run --repeat N`'s
// report at the end: the set's text or JSON (report/run_set_report.h). The other formats and the
// options that shape one run's report describe one run: refused, pointing to `report DIR/K`.
#pragma once

#include <string>

#include "cli/report_settings.h"

namespace lockscope {

// Refuses, before anything runs, what a set's report cannot be: a format other than text and
// json, --sort, --brief, --wide, --legend, --addresses, --caller-depth, --skip-frames. Throws
// CliError.
void check_run_set_report_settings(const ReportSettings& settings, const std::string& directory);
// Reads and symbolizes every run of the set in `directory` and writes its report as the checked
// `settings` say. Throws CliError.
void write_run_set_report(const std::string& directory, const ReportSettings& settings);

}  // namespace lockscope
