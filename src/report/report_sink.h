// Where a report goes: a stream the caller owns (stdout, stderr, a test's string), or a file.
// Most writers only need `stream()`; a writer whose library writes the file itself (SQLite, or a
// compressor that wants to seek) takes `path()` instead and never touches the stream. The file is
// created on the first use of `stream()`, so such a writer is not handed a file already opened
// (and truncated) by someone else.
//
// The CLI gives a temporary path and renames it over `-o FILE` once the writer is done, so a
// failed write never leaves half a report under the name asked for.
#pragma once

#include <fstream>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>

namespace lockscope {

// The file could not be created or written; what() is the system's reason ("Permission denied").
class ReportSinkError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ReportSink {
 public:
  explicit ReportSink(std::ostream& out) : stream_(&out) {}
  explicit ReportSink(std::string path) : path_(std::move(path)) {}
  ReportSink(const ReportSink&) = delete;
  ReportSink& operator=(const ReportSink&) = delete;

  // The file to write; empty when the report goes to a stream.
  const std::string& path() const { return path_; }
  bool is_file() const { return !path_.empty(); }
  // The stream to write to; for a file, created (truncated) on first use. Throws ReportSinkError.
  std::ostream& stream();
  // Flushes what was written; throws ReportSinkError when it did not all reach the file.
  void finish();

 private:
  std::string path_;
  std::unique_ptr<std::ofstream> file_;
  std::ostream* stream_ = nullptr;
};

}  // namespace lockscope
