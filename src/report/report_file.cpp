#include "report/report_file.h"

#include <fmt/core.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <regex>
#include <stdexcept>

namespace lockscope {

namespace {

namespace fs = std::filesystem;

// Where a report asked for at `output` goes.
struct ReportTarget {
  enum Kind {
    kReplace,  // `path`, a regular file or none yet: written to path.tmp, renamed over it
    kInto,     // `path`, not a regular file (a device, a FIFO) or a descriptor: written into it
    kStdout,   // /dev/stdout: the CLI's own standard output, as -o -
    kStderr,   // /dev/stderr
  };
  Kind kind;
  std::string path;
};

// A name of an open descriptor (/dev/fd/1, /proc/self/fd/1): its link leads to whatever the
// descriptor has open, which a rename must not replace (a shell's `>> log`) nor follow.
bool names_a_descriptor(const std::string& path) {
  static const std::regex descriptor(
      "/dev/(fd/[0-9]+|stdin)|/proc/(self|thread-self|[0-9]+)/fd/[0-9]+");
  return std::regex_match(path, descriptor);
}

ReportTarget report_target(const std::string& output) {
  if (standard_descriptor_named(output) == STDOUT_FILENO) return {ReportTarget::kStdout, output};
  if (standard_descriptor_named(output) == STDERR_FILENO) return {ReportTarget::kStderr, output};
  if (names_a_descriptor(output)) return {ReportTarget::kInto, output};
  // A symbolic link is followed to the file it names, which then gets the report (the link stays
  // a link), even a file not there yet (a dangling link).
  fs::path path = output;
  std::error_code error;
  for (int links = 0; links < 40 && fs::is_symlink(fs::symlink_status(path, error)); ++links) {
    const fs::path target = fs::read_symlink(path, error);
    if (error) break;
    path = target.is_absolute() ? target : path.parent_path() / target;
    if (names_a_descriptor(path.lexically_normal().string())) return {ReportTarget::kInto, output};
  }
  const fs::file_status status = fs::status(path, error);
  if (!error && fs::exists(status) && !fs::is_regular_file(status))
    return {ReportTarget::kInto, path.string()};
  return {ReportTarget::kReplace, path.string()};
}

// SIGPIPE ignored while the report is written: a FIFO whose reader left makes the write fail
// (EPIPE, a clear error) instead of killing lockscope before it could keep `run`'s exit status.
class PipeSignalIgnored {
 public:
  PipeSignalIgnored() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &previous_);
  }
  ~PipeSignalIgnored() { sigaction(SIGPIPE, &previous_, nullptr); }
  PipeSignalIgnored(const PipeSignalIgnored&) = delete;
  PipeSignalIgnored& operator=(const PipeSignalIgnored&) = delete;

 private:
  struct sigaction previous_ {};
};

}  // namespace

int standard_descriptor_named(const std::string& output) {
  if (output == "/dev/stdout") return STDOUT_FILENO;
  if (output == "/dev/stderr") return STDERR_FILENO;
  return -1;
}

void write_report_file(ReportWriter& writer, const Profile& profile, const ReportOptions& options,
                       const std::string& output) {
  write_report_file([&](ReportSink& sink) { writer.write(profile, options, sink); }, output);
}

void write_report_file(const std::function<void(ReportSink&)>& write, const std::string& output) {
  const ReportTarget target = report_target(output);
  const PipeSignalIgnored pipe_signal_ignored;
  if (target.kind == ReportTarget::kStdout || target.kind == ReportTarget::kStderr) {
    ReportSink sink(target.kind == ReportTarget::kStdout ? std::cout : std::cerr);
    write(sink);
    return;
  }
  const bool replace = target.kind == ReportTarget::kReplace;
  const std::string written = replace ? target.path + ".tmp" : target.path;
  const auto remove_temporary = [&] {
    std::error_code ignored;
    if (replace) std::filesystem::remove(written, ignored);
  };
  const auto failed = [&](const std::string& why, bool file_problem) {
    remove_temporary();
    return ReportFileError(fmt::format("cannot write the report to '{}': {}", output, why),
                           file_problem);
  };
  try {
    // Into a device or a FIFO as it is, through the stream alone (report_writer.h).
    ReportSink sink =
        replace ? ReportSink(written) : ReportSink(written, ReportSink::ThroughStreamOnly{});
    write(sink);
    sink.finish();
  } catch (const ReportSinkError& error) {
    throw failed(error.what(), true);
  } catch (const std::invalid_argument&) {
    // The format cannot show this profile (chrome without a trace), or cannot be written into
    // this file (sqlite into a FIFO): the writer's own words.
    remove_temporary();
    throw;
  } catch (const std::exception& error) {
    throw failed(error.what(), false);
  }
  if (!replace) return;
  std::error_code error;
  std::filesystem::rename(written, target.path, error);
  if (error) throw failed(error.message(), true);
}

}  // namespace lockscope
