#include "cli/report_settings.h"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include "analysis/profile_reader.h"
#include "analysis/profile_symbolization.h"
#include "analysis/utf8_repair.h"
#include "analysis/wait_attribution.h"
#include "cli/cli_error.h"
#include "common/trace_format.h"
#include "report/lock_rows.h"
#include "report/report_file.h"

namespace lockscope {
namespace {

// A format-specific option (--weight, --table) given with a format that does not read it is a
// mistake to say, not to ignore.
void check_format_options(const std::string& format, const ReportSettings& settings) {
  const ReportFormat* chosen = find_report_format(format);
  for (const std::string& option : settings.format_options) {
    if (std::find(chosen->options.begin(), chosen->options.end(), option) != chosen->options.end())
      continue;
    std::vector<std::string> takers;
    for (const ReportFormat& other : report_format_table())
      if (std::find(other.options.begin(), other.options.end(), option) != other.options.end())
        takers.push_back(other.name);
    throw CliError(fmt::format("{} applies to -f {}, not to the {} format", option,
                               fmt::join(takers, ", "), format),
                   "choose the format with -f, or leave the option out");
  }
}

// On a terminal, a large profile's symbolization shows a progress line on stderr (never stdout,
// which may be the report), erased when done.
SymbolizeProgress symbolize_progress_line() {
  if (!isatty(STDERR_FILENO)) return {};
  return [shown = false](size_t done, size_t total) mutable {
    constexpr size_t kWorthShowing = 2000;  // code locations; fewer take well under a second
    if (total < kWorthShowing) return;
    if (done < total) {
      fmt::print(stderr, "\rlockscope: symbolizing {} of {} code locations", done, total);
      shown = true;
    } else if (shown) {
      fmt::print(stderr, "\r\033[K");
    }
    std::fflush(stderr);
  };
}

}  // namespace

void add_report_options(CLI::App& app, ReportSettings& settings) {
  app.add_option("-f,--format", settings.format,
                 "report format (see Formats below; default: from the report file's extension, "
                 "else text)")
      ->check(CLI::IsMember(report_formats()));
  app.add_option_function<std::string>(
         "--weight",
         [&settings](const std::string& weight) {
           parse_stack_weight(weight, settings.options.weight);
           settings.format_options.push_back("--weight");
         },
         "what the stack formats (collapsed, speedscope, pprof) weigh: wait (lock wait time, "
         "default) or hold (lock hold time, by acquire site)")
      ->check(CLI::IsMember({"wait", "hold"}))
      ->default_str("wait");
  app.add_option_function<std::string>(
         "--table",
         [&settings](const std::string& table) {
           settings.options.table = table;
           settings.format_options.push_back("--table");
         },
         "which table -f csv writes: locks (default) or sites (every call site of every lock)")
      ->check(CLI::IsMember({"locks", "sites"}))
      ->default_str("locks");
  const std::string footer = app.get_footer();
  app.footer((footer.empty() ? "" : footer + "\n\n") + report_formats_help());
  const std::vector<std::string> sort_keys = lock_sort_keys();
  app.add_option("--sort", settings.options.sort_key,
                 "sort the locks by this column: its title, lower-case, '-' for a space (wait, "
                 "hold: WAIT TOTAL, HOLD TOTAL; le-1us ... gt-1ms: the ≤1µs ... >1ms columns)")
      ->transform(CLI::Validator(
          [sort_keys](std::string& key) {
            // The keys on the error's line: --help has them too, but a typo wants them at once.
            if (!find_lock_column(key))
              return fmt::format("'{}' is not a column's key (keys: {})", key,
                                 fmt::join(sort_keys, ", "));
            key = canonical_sort_key(key);
            return std::string();
          },
          fmt::format("{{{}}}", fmt::join(sort_keys, ","))))
      ->default_str(kDefaultSortKey);
  app.add_option("--top", settings.options.top,
                 "locks listed in detail, and threads in the threads table (--all: every one)")
      ->transform(CLI::Validator(
          [](const std::string& number) {
            const bool digits = !number.empty() && number.size() <= 9 &&
                                number.find_first_not_of("0123456789") == std::string::npos;
            return digits ? std::string()
                          : fmt::format("'{}' is not a whole number from 0 to 999999999", number);
          },
          "N"))
      ->default_str("10");
  app.add_flag("--all", settings.options.all, "list every lock, including never-acquired ones");
  app.add_option_function<unsigned>(
         "--caller-depth",
         [&settings](const unsigned& depth) {
           settings.caller_depth = depth;
           settings.attribute_waits = true;
         },
         "attribute each contended wait with a stack to the frame N calls out from its call site "
         "(0: the call site), then past --skip-frames")
      ->check(CLI::Range(0u, 64u))
      ->default_str("0");
  app.add_option_function<std::string>(
         "--skip-frames",
         [&settings](const std::string& pattern) {
           settings.skip_frames = pattern;
           settings.attribute_waits = true;
         },
         "attribute each contended wait with a stack to its first frame (innermost first) whose "
         "function name does not match this ECMAScript regex: the caller of your lock wrappers")
      ->check(CLI::Validator(
          [](std::string& pattern) {
            std::string error;
            return make_wait_attribution_rule(0, pattern, error)
                       ? std::string()
                       : fmt::format("not a valid regular expression: '{}' ({})", pattern, error);
          },
          "REGEX"));
  // The text report's own: given with another format, check_format_options says so.
  auto text_flag = [&](const char* name, bool& flag, const char* help) {
    app.add_flag_callback(
        name,
        [&settings, &flag, name] {
          flag = true;
          settings.format_options.push_back(name);
        },
        help);
  };
  text_flag("--brief", settings.options.brief,
            "text: print only the first screen (the verdict and the top findings, within 80 "
            "columns and 40 lines)");
  text_flag("--wide", settings.options.wide,
            "text: every column of every table (by default the tables fit 120 columns)");
  text_flag("--legend", settings.options.legend,
            "text: end with the meaning of each column (docs/cli.md has it too)");
  text_flag("--addresses", settings.options.addresses,
            "text: name each lock by pid/address instead of by its name");
}

void check_report_settings(ReportSettings& settings) {
  if (settings.format.empty() && !settings.output.empty()) {
    try {
      settings.format = format_for_path(settings.output);
    } catch (const std::invalid_argument& unknown) {
      throw CliError(fmt::format("{}: {} {}: {}", settings.command, settings.output_option,
                                 settings.output, unknown.what()),
                     fmt::format("choose the format with -f FORMAT (then any name will do), or "
                                 "end the name with one of: {}",
                                 report_extensions()));
    }
  }
  if (settings.format.empty()) settings.format = "text";
  check_format_options(settings.format, settings);
  // A binary format, or one made for a viewer, is refused on a terminal as gzip refuses to write
  // compressed data to one: it would only flood the screen. The terminal is the report's stream
  // when it goes to one of lockscope's own (no file, `-`, /dev/stdout, /dev/stderr).
  const ReportFormat& format = *find_report_format(settings.format);
  int descriptor = standard_descriptor_named(settings.output);
  if (settings.output.empty() || settings.output == "-")
    descriptor = settings.to_stderr ? STDERR_FILENO : STDOUT_FILENO;
  if (!format.not_for_terminal.empty() && descriptor >= 0 && isatty(descriptor))
    throw CliError(fmt::format("{}: refusing to write {} to a terminal ({})", settings.command,
                               format.name, format.not_for_terminal),
                   fmt::format("write it to a file: {} report{}", settings.output_option,
                               format.extensions.front()));
}

Profile read_symbolized_profile(const std::string& directory) {
  Profile profile;
  try {
    profile = read_profile_directory(directory);
  } catch (const std::runtime_error& error) {
    throw CliError(error.what(), "give the directory written by `lockscope record -o DIR`");
  }
  if (profile.processes.empty() && profile.problems.empty())
    throw CliError(fmt::format("no profile in '{}' (no *.lsprof file)", directory),
                   "the program may have been killed before exiting, or cleared LD_PRELOAD");
  if (profile.processes.empty()) {
    const ProfileProblem& first = profile.problems.front();
    throw CliError(
        fmt::format("no readable profile in '{}': {}: {}", directory, first.file, first.message),
        profile.problems.size() > 1
            ? fmt::format("{} more damaged file(s)", profile.problems.size() - 1)
            : "");
  }
  // On a terminal, libdw's debuginfod client shows the progress of its downloads (unless the
  // user set DEBUGINFOD_PROGRESS already); stdout may be the report, so it writes to stderr.
  if (isatty(STDERR_FILENO)) setenv("DEBUGINFOD_PROGRESS", "1", /*overwrite=*/0);
  symbolize_profile(profile, symbolize_progress_line());
  repair_profile_strings(profile);
  return profile;
}

void write_report(const std::string& directory, const ReportSettings& settings) {
  Profile profile = read_symbolized_profile(directory);
  ReportOptions options = settings.options;
  if (settings.attribute_waits) {
    std::string error;  // the pattern was checked when parsed
    options.attribution =
        make_wait_attribution_rule(settings.caller_depth, settings.skip_frames, error);
  }
  auto writer = make_report_writer(settings.format);
  if (settings.output.empty() || settings.output == "-") {
    writer->write(profile, options, settings.to_stderr ? std::cerr : std::cout);
  } else {
    try {
      write_report_file(*writer, profile, options, settings.output);
    } catch (const ReportFileError& error) {
      throw CliError(error.what(),
                     error.file_problem()
                         ? fmt::format("choose another file with {} FILE", settings.output_option)
                         : "");
    }
  }
  for (const ProfileProblem& problem : profile.problems)
    fmt::print(stderr, "lockscope: warning: {}: {} ({})\n", problem.file, problem.message,
               problem.file.ends_with(format::kTraceSuffix) ? "its events are left out"
                                                            : "its process is left out");
  if (options.attribution) {
    const SkipFramesMatches matches = skip_frames_matches(profile, *options.attribution);
    const size_t depth = options.attribution->caller_depth;
    if (matches.stacks > 0 && matches.matched == 0)
      fmt::print(stderr,
                 "lockscope: warning: --skip-frames '{}' matched no frame of the {} stack{} of "
                 "contended waits: waits are attributed to {}\n",
                 settings.skip_frames, matches.stacks, matches.stacks == 1 ? "" : "s",
                 depth == 0 ? std::string("their innermost frame")
                            : fmt::format("the frame {} call{} out from their call site "
                                          "(--caller-depth {})",
                                          depth, depth == 1 ? "" : "s", depth));
  }
}

}  // namespace lockscope
