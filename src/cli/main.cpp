// `lockscope`: thin subcommands over analysis + report. The only catch of CliError is here.
#include <fmt/core.h>

#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_command.h"
#include "cli/cli_error.h"
#include "cli/diff_command.h"
#include "cli/profile_commands.h"

namespace {

constexpr const char* kUsage =
    "usage: lockscope <command> [options]\n"
    "\n"
    "commands:\n"
    "  run    [options] -- CMD [ARGS...]   profile CMD, then print the report (to stderr)\n"
    "  record [-o DIR] [--repeat N] [options] -- CMD  write the profile directory only\n"
    "  report [DIR] [-f FORMAT] [-o FILE] [--sort KEY] [--top N] [--all]\n"
    "         [--brief] [--wide] [--legend] [--addresses]  (text: first screen only, ...)\n"
    "         [--caller-depth N] [--skip-frames REGEX]  (waits by the caller of lock wrappers)\n"
    "  diff   BASE NEW [-f FORMAT] [--fail-on RULE]  compare two profiles or sets of runs\n"
    "  bench  SCENARIO [options]           the lab: mutex, condvar, storm, pi, c2c, all\n"
    "\n"
    "`lockscope <command> --help` describes each command's options (`report --help`: the "
    "formats).\n";

// The lab reports its errors in its own type (it depends on nothing in src/cli): the same one-line
// error and hint as every other command, exit status 125.
int run_bench(const std::vector<std::string>& args) {
  try {
    return lockscope::lab::run_bench_command(args);
  } catch (const lockscope::lab::BenchError& error) {
    throw lockscope::CliError(error.what(), error.hint());
  }
}

int dispatch(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    fmt::print("{}", kUsage);
    return args.empty() ? lockscope::kExitOwnError : 0;
  }
  if (args[0] == "--version") {
    fmt::print("lockscope {}\n", LOCKSCOPE_VERSION);
    return 0;
  }
  const std::string& command = args[0];
  if (command == "run") return lockscope::run_run_command(args);
  if (command == "record") return lockscope::run_record_command(args);
  if (command == "report") return lockscope::run_report_command(args);
  if (command == "bench") return run_bench(args);
  if (command == "diff") return lockscope::run_diff_command(args);
  throw lockscope::CliError(fmt::format("unknown command '{}'", command),
                            "commands are: run, record, report, bench (see `lockscope --help`)");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return dispatch(args);
  } catch (const lockscope::CliError& error) {
    fmt::print(stderr, "lockscope: error: {}\n", error.what());
    if (!error.hint().empty()) fmt::print(stderr, "hint: {}\n", error.hint());
    return error.exit_status();
  } catch (const std::exception& error) {
    fmt::print(stderr, "lockscope: error: {}\n", error.what());
    return lockscope::kExitOwnError;
  }
}
