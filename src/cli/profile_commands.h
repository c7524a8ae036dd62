// The profiler's subcommands: run, record, report. args[0] is the command name.
#pragma once

#include <string>
#include <vector>

namespace lockscope {
int run_run_command(const std::vector<std::string>& args);
int run_record_command(const std::vector<std::string>& args);
int run_report_command(const std::vector<std::string>& args);
}  // namespace lockscope
