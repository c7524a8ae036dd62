#include "cli/profile_commands.h"

#include "cli/cli_error.h"

namespace lockscope {
// Filled in by the profiler core commit that follows.
int run_run_command(const std::vector<std::string>&) { throw CliError("run: not built yet"); }
int run_record_command(const std::vector<std::string>&) { throw CliError("record: not built yet"); }
int run_report_command(const std::vector<std::string>&) { throw CliError("report: not built yet"); }
}  // namespace lockscope
