// One writer per output format, each over the neutral Profile model and a ReportSink; no writer
// reads profile files or knows another format. The formats are one table (report_format_table):
// `-f NAME` and `-o FILE`'s extension pick from it and `--help` lists it, so a new format is one
// writer file and one row.
#pragma once

#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/profile_model.h"
#include "analysis/profile_views.h"
#include "analysis/wait_attribution.h"
#include "analysis/weighted_stacks.h"

namespace lockscope {

// Where a report goes: a stream the caller owns (stdout, stderr, a test's string), or a file.
// Most writers only need `stream()`; a writer whose library writes the file itself (SQLite, or a
// compressor that wants to seek) takes `path()` instead and never touches the stream. The file is
// created on the first use of `stream()`, so such a writer is not handed a file already opened
// (and truncated) by someone else.
//
// The CLI gives a temporary path and renames it over `-o FILE` once the writer is done, so a
// failed write never leaves half a report under the name asked for.
//
// ReportSinkError: the file could not be created or written; what() is the system's reason
// ("Permission denied").
class ReportSinkError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ReportSink {
 public:
  explicit ReportSink(std::ostream& out) : stream_(&out) {}
  explicit ReportSink(std::string path) : path_(std::move(path)) {}
  // A file that is written into only through stream(), as it is: not a regular file (a device,
  // a FIFO). It is no file for is_file(), so a writer that writes its file itself (SQLite, which
  // first removes whatever is at its path) refuses it as it refuses a stream.
  struct ThroughStreamOnly {};
  ReportSink(std::string path, ThroughStreamOnly) : path_(std::move(path)), stream_only_(true) {}
  ReportSink(const ReportSink&) = delete;
  ReportSink& operator=(const ReportSink&) = delete;

  // The file to write; empty when the report goes to a stream.
  const std::string& path() const { return path_; }
  bool is_file() const { return !path_.empty() && !stream_only_; }
  // The stream to write to; for a file, created (truncated) on first use. Throws ReportSinkError.
  std::ostream& stream();
  // Flushes what was written; throws ReportSinkError when it did not all reach the file.
  void finish();

 private:
  std::string path_;
  bool stream_only_ = false;
  std::unique_ptr<std::ofstream> file_;
  std::ostream* stream_ = nullptr;
};

struct ReportOptions {
  std::string sort_key = "wait";  // a key of lock_columns() (lock_rows.h's kDefaultSortKey)
  size_t top = 10;                // locks listed in detail
  bool all = false;               // every lock, including those never acquired
  std::string command;            // for the header: "lockscope run -- ..." when known
  // --caller-depth / --skip-frames: contended waits by the first frame outside the wrappers
  std::optional<WaitAttributionRule> attribution;
  StackWeight weight = StackWeight::kWait;  // --weight: what the stack formats weigh
  std::string table = "locks";              // --table: which table csv writes ("locks", "sites")
  // The text report's: --brief (its first screen only: the verdict and the top findings),
  // --wide (every column; by default the tables fit 120 columns), --legend (what each column
  // means), --addresses (locks by pid/address rather than by name).
  bool brief = false;
  bool wide = false;
  bool legend = false;
  bool addresses = false;
};

// A writer renders the views of one profile (analysis/profile_views.h: its derived figures and
// findings, computed once) and computes nothing itself.
class ReportWriter {
 public:
  virtual ~ReportWriter() = default;
  virtual void write(const ProfileViews& views, const ReportOptions& options, ReportSink& sink) = 0;
  // The same to a stream the caller owns.
  void write(const ProfileViews& views, const ReportOptions& options, std::ostream& out) {
    ReportSink sink(out);
    write(views, options, sink);
  }
  // The same, building the views of `profile` first.
  void write(const Profile& profile, const ReportOptions& options, ReportSink& sink) {
    const ProfileViews views(profile);
    write(views, options, sink);
  }
  void write(const Profile& profile, const ReportOptions& options, std::ostream& out) {
    ReportSink sink(out);
    write(profile, options, sink);
  }
};

struct ReportFormat {
  std::string name;                     // for -f
  std::vector<std::string> extensions;  // "-o FILE" ending with one picks this format
  std::function<std::unique_ptr<ReportWriter>()> make;
  std::string help;                  // one line, for --help
  std::vector<std::string> options;  // the format-specific options it reads ("--weight")
  // Empty when the format is for reading on a terminal; else what it is instead ("gzip-compressed
  // protobuf"), for the CLI's refusal to write it to one.
  std::string not_for_terminal;
};

// Every format, in the order --help lists them; "text" first (the default).
const std::vector<ReportFormat>& report_format_table();
const ReportFormat* find_report_format(const std::string& name);
// Throws std::invalid_argument naming the known formats when `format` is not one.
std::unique_ptr<ReportWriter> make_report_writer(const std::string& format);
std::vector<std::string> report_formats();
// The format whose extension the file name of `path` ends with (the longest that matches:
// "x.speedscope.json" is speedscope, "x.json" json); nullptr when none does.
const ReportFormat* format_with_extension(const std::string& path);
// The format a report file named `path` gets without -f: its extension's, and text for a name
// without an extension ("report", "-", /dev/stdout, /dev/fd/3). A name whose extension no format
// has ("x.svg", "x.json.gz") throws std::invalid_argument naming the extension and the formats:
// text written under it would mislead whoever opens the file by its name.
std::string format_for_path(const std::string& path);
// Every format's extensions, in the table's order: ".txt .out .log .json ...", for a hint.
std::string report_extensions();
// "Formats (-f NAME, or from -o FILE's extension):" and a line per format, for --help.
std::string report_formats_help();

std::unique_ptr<ReportWriter> make_text_report_writer();
std::unique_ptr<ReportWriter> make_json_report_writer();
std::unique_ptr<ReportWriter> make_collapsed_report_writer();
std::unique_ptr<ReportWriter> make_speedscope_report_writer();
std::unique_ptr<ReportWriter> make_csv_report_writer();
std::unique_ptr<ReportWriter> make_pprof_report_writer();
std::unique_ptr<ReportWriter> make_sqlite_report_writer();
std::unique_ptr<ReportWriter> make_chrome_trace_report_writer();
std::unique_ptr<ReportWriter> make_html_report_writer();
std::unique_ptr<ReportWriter> make_sarif_report_writer();

}  // namespace lockscope
