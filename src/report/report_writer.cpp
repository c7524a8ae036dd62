#include "report/report_writer.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace lockscope {

std::ostream& ReportSink::stream() {
  if (stream_) return *stream_;
  errno = 0;
  file_ = std::make_unique<std::ofstream>(path_, std::ios::binary | std::ios::trunc);
  if (!*file_) {
    const int error = errno;
    file_.reset();
    throw ReportSinkError(error ? std::strerror(error) : "cannot create the file");
  }
  stream_ = file_.get();
  return *stream_;
}

void ReportSink::finish() {
  if (!stream_) return;  // nothing written through the stream (or the writer wrote path() itself)
  // A write that failed already (a FIFO whose reader left: EPIPE) left its reason in errno.
  const bool failed_before = stream_->fail();
  const int earlier = errno;
  if (!failed_before) errno = 0;
  stream_->flush();
  if (file_) file_->close();
  if (stream_->fail() || (file_ && file_->fail())) {
    const int error = failed_before ? earlier : errno;
    throw ReportSinkError(error ? std::strerror(error) : "write failed");
  }
}

// Refused on a terminal (not_for_terminal): the binary formats, whose bytes garble the screen
// (pprof is gzip, sqlite a database file), and those made for a viewer, one line of JSON or a page
// of script that runs to megabytes nobody reads there (speedscope, chrome, html). text, json, csv
// and collapsed are text a person does read on a terminal, or pipes on (`| jq`: no terminal).
const std::vector<ReportFormat>& report_format_table() {
  static const std::vector<ReportFormat> formats = {
      {"text",
       {".txt", ".out", ".log"},
       make_text_report_writer,
       "the report for people: processes, threads, locks, call sites, stacks, blame (default)",
       {"--brief", "--wide", "--legend", "--addresses"},
       {}},
      {"json",
       {".json"},
       make_json_report_writer,
       "everything, under a versioned schema (docs/json-schema.md): the contract for scripts",
       {},
       {}},
      {"collapsed",
       {".collapsed", ".folded"},
       make_collapsed_report_writer,
       "folded stacks for flamegraph.pl and inferno: 'pid;frame;...;lock NS', by --weight",
       {"--weight"},
       {}},
      {"speedscope",
       {".speedscope.json"},
       make_speedscope_report_writer,
       "speedscope's file format: one sampled profile per process, by --weight",
       {"--weight"},
       "JSON for speedscope to draw"},
      {"pprof",
       {".pb.gz", ".pprof"},
       make_pprof_report_writer,
       "gzipped profile.proto for go tool pprof: contentions and delay, or holds, by --weight",
       {"--weight"},
       "gzip-compressed protobuf"},
      {"csv",
       {".csv"},
       make_csv_report_writer,
       "the locks table, or with --table sites the call sites table, for spreadsheets",
       {"--table"},
       {}},
      {"sqlite",
       {".db", ".sqlite", ".sqlite3"},
       make_sqlite_report_writer,
       "an SQLite database of every table, stack and traced event (docs/sqlite-schema.md)",
       {},
       "an SQLite database file"},
      {"chrome",
       {".trace.json"},
       make_chrome_trace_report_writer,
       "Trace Event JSON for Perfetto and chrome://tracing: waits, holds, handoffs (--trace)",
       {},
       "Trace Event JSON for a trace viewer"},
      {"html",
       {".html", ".htm"},
       make_html_report_writer,
       "one self-contained page: flame graphs, locks with histograms, blame, timeline (--trace)",
       {"--weight"},
       "a web page for a browser"},
      {"sarif",
       {".sarif"},
       make_sarif_report_writer,
       "the findings as SARIF 2.1.0 results at their source lines, for code-scanning views",
       {},
       ""},  // JSON text: readable, and piped to tools, as json is
  };
  return formats;
}

const ReportFormat* find_report_format(const std::string& name) {
  for (const ReportFormat& format : report_format_table())
    if (format.name == name) return &format;
  return nullptr;
}

std::vector<std::string> report_formats() {
  std::vector<std::string> names;
  for (const ReportFormat& format : report_format_table()) names.push_back(format.name);
  return names;
}

std::unique_ptr<ReportWriter> make_report_writer(const std::string& format) {
  if (const ReportFormat* known = find_report_format(format)) return known->make();
  throw std::invalid_argument(fmt::format("unknown report format '{}' (known: {})", format,
                                          fmt::join(report_formats(), ", ")));
}

const ReportFormat* format_with_extension(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const ReportFormat* best = nullptr;
  size_t best_length = 0;
  for (const ReportFormat& format : report_format_table())
    for (const std::string& extension : format.extensions)
      if (name.ends_with(extension) && extension.size() > best_length) {
        best = &format;
        best_length = extension.size();
      }
  return best;
}

std::string format_for_path(const std::string& path) {
  if (const ReportFormat* format = format_with_extension(path)) return format->name;
  // The extension is what follows the name's last dot; a leading dot (".report") or a trailing
  // one ("report.") makes none.
  const std::string name = std::filesystem::path(path).filename().string();
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == name.size()) return "text";
  throw std::invalid_argument(fmt::format("no report format has the extension '{}' (formats: {})",
                                          name.substr(dot), fmt::join(report_formats(), ", ")));
}

std::string report_extensions() {
  std::vector<std::string> extensions;
  for (const ReportFormat& format : report_format_table())
    extensions.insert(extensions.end(), format.extensions.begin(), format.extensions.end());
  return fmt::format("{}", fmt::join(extensions, " "));
}

std::string report_formats_help() {
  std::string text = "Formats (-f NAME, or from the report file's extension):\n";
  for (const ReportFormat& format : report_format_table()) {
    const std::string extensions = fmt::format("{}", fmt::join(format.extensions, " "));
    text += fmt::format("  {:<11} {:<22} {}\n", format.name, extensions, format.help);
  }
  return text;
}

}  // namespace lockscope
