// `lockscope run`, `record` and `report`: option parsing and orchestration only; the work lives in
// target_program, target_launch, profile_directory, report_settings (CLI) and the analysis and
// report libraries.
#include "cli/profile_commands.h"

#include <fmt/core.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>

#include "analysis/compare/run_set.h"
#include "cli/cli_error.h"
#include "cli/cli_parse.h"
#include "cli/interrupted_report.h"
#include "cli/profile_directory.h"
#include "cli/repeated_runs.h"
#include "cli/report_settings.h"
#include "cli/run_set_report.h"
#include "cli/target_launch.h"
#include "cli/target_program.h"
#include "common/profile_format.h"
#include "common/runtime_config.h"
#include "report/report_writer.h"

namespace lockscope {
namespace {

// "8M" for 8 MiB: a size as --trace-size takes it.
std::string size_text(uint64_t bytes) {
  constexpr std::pair<uint64_t, const char*> kUnits[] = {
      {1ull << 30, "G"}, {1ull << 20, "M"}, {1ull << 10, "K"}};
  for (const auto& [unit, suffix] : kUnits)
    if (bytes % unit == 0) return std::to_string(bytes / unit) + suffix;
  return std::to_string(bytes);
}

// Splits "lockscope run [options] -- CMD ARGS" at the first "--" (or the first non-option word).
std::pair<std::vector<std::string>, std::vector<std::string>> split_command(
    const std::vector<std::string>& args) {
  auto dashes = std::find(args.begin() + 1, args.end(), "--");
  if (dashes != args.end())
    return {std::vector<std::string>(args.begin(), dashes),
            std::vector<std::string>(dashes + 1, args.end())};
  return {args, {}};
}

// Why a run left no profile file: the directory went away or became unwritable while the program
// ran, or no exit path of the runtime ran (SIGKILL), or the runtime could not write the file (the
// program ended by itself: its message is on the program's stderr), or the program dropped
// LD_PRELOAD.
std::string why_no_profile(const std::string& directory, const TargetOutcome& outcome) {
  std::error_code error;
  if (!std::filesystem::is_directory(directory, error))
    return fmt::format(
        "no profile was written: the profile directory '{}' no longer exists (it "
        "was removed while the program ran)",
        directory);
  if (access(directory.c_str(), W_OK | X_OK) != 0)
    return fmt::format(
        "no profile was written: the profile directory '{}' is no longer "
        "writable ({})",
        directory, std::strerror(errno));
  // The program runs with this process's file size limit (unless it changed its own): the
  // runtime writes no file past it (the kernel would end the program with SIGXFSZ).
  if (struct rlimit limit{};
      getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    return fmt::format(
        "no profile was written to {}/ (the program was killed by SIGKILL, "
        "cleared LD_PRELOAD from its environment, or its profile was larger than "
        "the file size limit of {} bytes: ulimit -f)",
        directory, static_cast<uint64_t>(limit.rlim_cur));
  if (outcome.signaled && outcome.signal == SIGKILL)
    return fmt::format(
        "no profile was written to {}/: the program was killed by SIGKILL (or it "
        "cleared LD_PRELOAD from its environment)",
        directory);
  // Ended by itself (or by a signal the runtime writes on): an exit path ran, and could not write
  // (out of file descriptors, or of memory: a program that had closed or replaced its stderr
  // never shows why, raw_log.h).
  return fmt::format(
      "no profile was written to {}/: the program ended ({}) but its profile could "
      "not be written (the reason is on the program's stderr, unless it had closed or "
      "replaced it), or it cleared LD_PRELOAD from its environment",
      directory,
      outcome.signaled ? fmt::format("signal {}", strsignal(outcome.signal))
                       : fmt::format("exit status {}", outcome.exit_status));
}

// Every default is the runtime's own (runtime_config.h), and --help shows it.
struct RecordSettings {
  std::string directory = config::kDefaultDirectory;
  unsigned hold_sample = config::kDefaultHoldSamplePeriod;
  double snapshot_interval = config::kDefaultSnapshotMs / 1000.0;  // seconds; 0: none
  unsigned stack_depth = config::kDefaultStackDepth;
  std::string unwind = config::kUnwindNames[config::kDefaultUnwind];
  std::string stacks = config::kDefaultStacks;
  bool trace = false;
  uint64_t trace_size = config::kDefaultTraceSize;
  std::string trace_full = config::kDefaultTraceFull;
  uint64_t min_wait_ns = config::kDefaultMinWaitNs;
  unsigned repeat = 0;  // --repeat N: a set of N runs in DIR/1 … DIR/N (0: one run, in DIR)
};

void add_record_options(CLI::App& app, RecordSettings& settings) {
  app.footer(
      fmt::format("The program to profile follows the options, after --:\n  {} [OPTIONS] -- CMD "
                  "[ARGS...]\nExit status: the program's (its signal re-raised; with --repeat, "
                  "the last run's); 125 "
                  "lockscope's own error, 126 cannot run, 127 not found.",
                  app.get_name()));
  app.add_option("-o,--output", settings.directory,
                 "the profile DIRECTORY to write (one file per process; an older one is kept as "
                 "DIR.old), not the report's file (that is run --report FILE, report -o FILE)")
      ->default_str(config::kDefaultDirectory);
  app.add_option("--hold-sample", settings.hold_sample,
                 "time a call site's first N uncontended holds, then 1 in N (1 = every hold); "
                 "contended holds are always timed")
      ->check(CLI::Range(1u, config::kMaxHoldSamplePeriod))
      ->default_str(std::to_string(config::kDefaultHoldSamplePeriod));
  app.add_option("--snapshot-interval", settings.snapshot_interval,
                 "also write each process's profile every SECONDS while it runs, so that a "
                 "process killed by SIGKILL keeps what it had recorded by its last snapshot "
                 "(written by a thread that holds no lock, at its next timed release)")
      ->check(CLI::Range(config::kMinSnapshotMs / 1000.0, config::kMaxSnapshotMs / 1000.0));
  app.add_option("--stack-depth", settings.stack_depth,
                 "frames of call stack kept for each contended wait, the hold it waited behind "
                 "and each timed hold (0: none); capturing takes at most 1 % of a thread's time "
                 "for waits and 1 % for holds, beyond that no stack is kept")
      ->check(CLI::Range(0u, config::kMaxStackDepth))
      ->default_str(std::to_string(config::kDefaultStackDepth));
  app.add_option("--unwind", settings.unwind,
                 "how stacks are walked: fp (frame pointers: fast, stops at code built without "
                 "them), dwarf (unwind tables: ~300 ns a frame), auto (fp, redone with dwarf when "
                 "the chain breaks)")
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(config::kUnwindNames),
                                                     std::end(config::kUnwindNames))))
      ->default_str(config::kUnwindNames[config::kDefaultUnwind]);
  app.add_option("--stacks", settings.stacks,
                 "contended (stacks of contended waits and timed holds, budgeted) or all (also a "
                 "stack for every acquisition, unbudgeted: every lock call then takes the slow "
                 "path and a stack walk, ~100 ns with frame pointers, microseconds with dwarf)")
      ->check(CLI::IsMember({config::kStacksContended, config::kStacksAll}))
      ->default_str(config::kDefaultStacks);
  app.add_flag("--trace", settings.trace,
               "also write every event with its time (acquire begin and end, release, condvar "
               "wait, wake and signal, semaphore, barrier, thread start and exit, fork, exec) to "
               "one file per thread, kept up to a SIGKILL");
  app.add_option("--trace-size", settings.trace_size,
                 "room for events in each thread's trace file (32 bytes an event): e.g. 64M, 1G")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(config::kMinTraceSize, config::kMaxTraceSize))
      ->default_str(size_text(config::kDefaultTraceSize));
  app.add_option("--trace-full", settings.trace_full,
                 "when a thread's trace file is full: stop (later events are dropped, counted) or "
                 "ring (the oldest are overwritten, counted)")
      ->check(CLI::IsMember({config::kTraceFullStop, config::kTraceFullRing}))
      ->default_str(config::kDefaultTraceFull);
  app.add_option("--min-wait", settings.min_wait_ns,
                 "with --trace, write only the waits at least this long (e.g. 10us, 1ms) and "
                 "nothing else; the report's counts stay exact")
      ->transform(CLI::AsNumberWithUnit(
          std::map<std::string, uint64_t>{
              {"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}},
          CLI::AsNumberWithUnit::UNIT_REQUIRED, "DURATION"));
  app.add_option("--repeat", settings.repeat,
                 fmt::format("run the program N times in a row (1 to {}), each run into "
                             "DIR/1 … DIR/N (a set `report DIR` shows as median [min–max]); a "
                             "run that fails (non-zero exit status, a signal, no profile) ends "
                             "the set there, keeping the runs recorded, and its status is "
                             "lockscope's",
                             kMaxRepeat))
      ->check(CLI::Range(1u, kMaxRepeat).description(""))  // the help says the range
      ->type_name("N");
}

// The command after the options: from "--", else what CLI11 left over (prefix_command stops at the
// first word it does not know, so an unknown option shows up here first).
std::vector<std::string> target_command(const CLI::App& app, std::vector<std::string> command,
                                        const std::string& name) {
  const std::vector<std::string> rest = app.remaining();
  auto unknown = [&](const std::string& word) {
    return CliError(fmt::format("{}: unknown option '{}'", name, word),
                    fmt::format("see `lockscope {} --help`; put the command after --", name));
  };
  if (!command.empty()) {
    if (!rest.empty()) throw unknown(rest[0]);  // "run --bogus -- cmd"
    return command;
  }
  if (!rest.empty() && rest[0].rfind("-", 0) == 0) throw unknown(rest[0]);
  return rest;
}

bool directory_has_profiles(const std::string& directory) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error))
    if (entry.path().extension() == format::kFileSuffix) return true;
  return false;
}

// `-o x.html` names the profile directory, which a report's name there made (a directory
// `x.html`, and no report): refused before the program runs, pointing to the report's option.
void check_profile_directory_name(const std::string& directory, const std::string& name) {
  const ReportFormat* format = format_with_extension(directory);
  if (!format) return;
  throw CliError(
      fmt::format("{}: -o {} names the profile directory, not the {} report's file", name,
                  directory, format->name),
      name == "run"
          ? fmt::format("-o names the profile directory; to write the {} report, give --report {} "
                        "(and -o DIR for the profile, default {})",
                        format->name, directory, config::kDefaultDirectory)
          : fmt::format("-o names the profile directory, and record writes no report: lockscope "
                        "record -o DIR -- CMD, then lockscope report DIR -o {}",
                        directory));
}

// The launch of `command` as `settings` say, checked before anything runs.
LaunchSettings launch_settings(const RecordSettings& settings,
                               const std::vector<std::string>& command, const std::string& name) {
  if (command.empty())
    throw CliError(fmt::format("{}: no command to profile", name),
                   fmt::format("usage: lockscope {} [options] -- CMD [ARGS...]", name));
  check_profile_directory_name(settings.directory, name);
  LaunchSettings launch;
  launch.executable = resolve_command(command[0]);
  check_preloadable(launch.executable);
  launch.runtime_library = runtime_library_path();
  launch.arguments = command;
  launch.profile_directory = settings.directory;
  launch.hold_sample_period = settings.hold_sample;
  launch.snapshot_interval_ms = static_cast<uint64_t>(settings.snapshot_interval * 1000);
  launch.stack_depth = settings.stack_depth;
  launch.unwind = settings.unwind;
  launch.all_stacks = settings.stacks == config::kStacksAll;
  if (settings.min_wait_ns != 0 && !settings.trace)
    throw CliError(fmt::format("{}: --min-wait filters a trace", name), "add --trace");
  launch.trace = settings.trace;
  launch.trace_size = settings.trace_size;
  launch.trace_ring = settings.trace_full == config::kTraceFullRing;
  launch.min_wait_ns = settings.min_wait_ns;
  return launch;
}

// Why `directory` holds no profile after a run that ended as `outcome`; nullopt when it holds one.
std::optional<std::string> missing_profile(const std::string& directory,
                                           const TargetOutcome& outcome) {
  if (directory_has_profiles(directory)) return std::nullopt;
  return why_no_profile(directory, outcome);
}

}  // namespace

int run_record_command(const std::vector<std::string>& args) {
  auto [options, command] = split_command(args);
  CLI::App app("Run CMD with the lockscope runtime preloaded; write one profile file per process",
               "lockscope record");
  RecordSettings settings;
  add_record_options(app, settings);
  app.prefix_command();
  try {
    parse_command_line(app, options);
  } catch (const CLI::CallForHelp&) {
    return 0;
  }
  command = target_command(app, command, "record");
  const LaunchSettings launch = launch_settings(settings, command, "record");
  if (settings.repeat != 0) {
    const RunSetOutcome set = record_run_set(launch, settings.repeat, missing_profile);
    if (set.runs_kept > 0)
      fmt::print(stderr, "lockscope: {} run{} written to {}/ (lockscope report {})\n",
                 set.runs_kept, set.runs_kept == 1 ? "" : "s", settings.directory,
                 settings.directory);
    exit_like(set.last);
  }
  const TargetOutcome outcome = record_one_run(launch);
  if (outcome.not_started) exit_like(outcome);  // the error is said: no profile to look for
  if (directory_has_profiles(settings.directory))
    fmt::print(stderr, "lockscope: profile written to {}/ (lockscope report {})\n",
               settings.directory, settings.directory);
  else
    fmt::print(stderr, "lockscope: warning: {}\n", why_no_profile(settings.directory, outcome));
  exit_like(outcome);
}

int run_run_command(const std::vector<std::string>& args) {
  auto [options, command] = split_command(args);
  CLI::App app("Profile CMD, then print the lock report (to stderr; --report FILE to write it)",
               "lockscope run");
  RecordSettings record_settings;
  ReportSettings report_settings;
  report_settings.command = "run";
  report_settings.output_option = "--report";
  report_settings.to_stderr = true;
  add_record_options(app, record_settings);
  add_report_options(app, report_settings);
  app.add_option("--report", report_settings.output, "write the report to FILE instead of stderr");
  app.prefix_command();
  try {
    parse_command_line(app, options);
  } catch (const CLI::CallForHelp&) {
    return 0;
  }
  command = target_command(app, command, "run");
  check_report_settings(report_settings);
  if (record_settings.repeat != 0)
    check_run_set_report_settings(report_settings, record_settings.directory);
  const LaunchSettings launch = launch_settings(record_settings, command, "run");
  TargetOutcome outcome;
  if (record_settings.repeat != 0) {
    const RunSetOutcome set = record_run_set(launch, record_settings.repeat, missing_profile);
    // Not started, or not one profile: said already.
    if (set.last.not_started || set.runs_kept == 0) exit_like(set.last);
    outcome = set.last;
  } else {
    outcome = record_one_run(launch);
    if (outcome.not_started) exit_like(outcome);  // the error is said: no report to write
  }
  try {
    const InterruptedReportNote note(record_settings.directory, outcome);  // a second Ctrl-C
    if (record_settings.repeat != 0) {
      write_run_set_report(record_settings.directory, report_settings);
    } else {
      if (!directory_has_profiles(record_settings.directory))
        throw CliError(why_no_profile(record_settings.directory, outcome));
      write_report(record_settings.directory, report_settings);
    }
  } catch (const CliError& error) {
    // The program ran: report the problem but keep its exit status.
    fmt::print(stderr, "lockscope: error: {}\n", error.what());
    if (!error.hint().empty()) fmt::print(stderr, "hint: {}\n", error.hint());
  } catch (const std::exception& error) {  // a writer's own failure, to a stream: the same
    fmt::print(stderr, "lockscope: error: cannot write the report: {}\n", error.what());
  }
  exit_like(outcome);
}

int run_report_command(const std::vector<std::string>& args) {
  CLI::App app("Report a profile directory written by `lockscope record` or `run`",
               "lockscope report");
  ReportSettings settings;
  std::string directory = config::kDefaultDirectory;
  app.add_option("directory", directory, "the profile DIRECTORY that run or record -o wrote")
      ->default_str(config::kDefaultDirectory);
  add_report_options(app, settings);
  app.add_option("-o,--output", settings.output,
                 "write the report to this FILE, not a directory (the format from its extension, "
                 "see Formats below; `-`: stdout); run and record's -o is the profile directory");
  try {
    parse_command_line(app, args);
  } catch (const CLI::CallForHelp&) {
    return 0;
  }
  check_report_settings(settings);
  if (compare::is_run_set(directory)) {
    check_run_set_report_settings(settings, directory);
    write_run_set_report(directory, settings);
    return 0;
  }
  write_report(directory, settings);
  return 0;
}

}  // namespace lockscope
