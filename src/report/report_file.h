// A report written to a file: to FILE.tmp, renamed over FILE once complete, so that a failed
// write never leaves half a report under the name asked for, nor the temporary file — whatever
// failed: the file (ReportSinkError) or the writer itself (any exception; a JSON library's, an
// allocation). A symbolic link is followed (the file it names gets the report, renamed over in
// its own directory, even one not there yet; the link stays); a FILE that is not a regular file
// (/dev/null, a FIFO) or that names a descriptor (/dev/fd/N, /proc/self/fd/N) is written into as
// it is (a rename would replace the device, or the file a shell's `>> log` opened), and
// /dev/stdout and /dev/stderr are lockscope's own. SIGPIPE is ignored meanwhile: a FIFO's reader
// that leaves is a write error.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#include "report/report_writer.h"

namespace lockscope {

// The report could not be written; what() says so, naming the file:
// "cannot write the report to 'x.json': No space left on device". file_problem(): the file could
// not be created, written or renamed (another file may do), rather than the writer failing.
class ReportFileError : public std::runtime_error {
 public:
  ReportFileError(const std::string& what, bool file_problem)
      : std::runtime_error(what), file_problem_(file_problem) {}
  bool file_problem() const { return file_problem_; }

 private:
  bool file_problem_;
};

void write_report_file(ReportWriter& writer, const Profile& profile, const ReportOptions& options,
                       const std::string& output);
// The same for a report that is not one profile's (a set of runs): `write` writes it to the sink.
void write_report_file(const std::function<void(ReportSink&)>& write, const std::string& output);

// STDOUT_FILENO for /dev/stdout, STDERR_FILENO for /dev/stderr (lockscope's own, which
// write_report_file writes to as streams); -1 for any other name.
int standard_descriptor_named(const std::string& output);

}  // namespace lockscope
