// CSV for spreadsheets (RFC 4180: a header row, fields quoted when they hold a comma, a quote or a
// line break, quotes doubled, lines ending CRLF). One table per file, since a file of two tables
// is read by no spreadsheet: the locks table by default, the call sites table with --table sites.
// Raw values, not the text report's rounded ones: counts as integers, times in nanoseconds (the
// columns ending in _ns), locks as pid, name (lock_names.h) and hexadecimal address. Rows follow
// --sort and --all, as in the text report; every row is written (no --top); an rwlock used from
// both sides is a row per side, each with only its side's call sites.
//
// The locks table's columns are the text report's (lock_columns(): one column per --sort key, so
// the two never disagree on what a column is), then the init site.
#include <fmt/core.h>

#include <cmath>
#include <functional>

#include "analysis/lock_names.h"
#include "report/lock_rows.h"
#include "report/report_writer.h"

namespace lockscope {
namespace {

std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\r\n") == std::string::npos) return value;
  std::string quoted = "\"";
  for (char c : value) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + '"';
}

void write_record(const std::vector<std::string>& fields, std::ostream& out) {
  for (size_t i = 0; i < fields.size(); ++i) out << (i ? "," : "") << csv_field(fields[i]);
  out << "\r\n";
}

// "owner-changes" -> "owner_changes", and "_ns" for a time.
std::string column_name(const LockColumn& column) {
  std::string name = column.key;
  for (char& c : name)
    if (c == '-') c = '_';
  return column.nanoseconds ? name + "_ns" : name;
}

// What identifies a row's lock, first in both tables.
std::vector<std::string> lock_fields(const LockRow& row) {
  return {std::to_string(row.process->pid),
          lock_name(*row.lock),
          fmt::format("0x{:x}", row.lock->address),
          std::to_string(row.lock->generation),
          row.side,
          lock_kind_name(*row.lock)};
}
const std::vector<std::string> kLockHeader = {"pid",        "name", "address",
                                              "generation", "side", "kind"};

void write_locks(const std::vector<LockRow>& rows, std::ostream& out) {
  std::vector<const LockColumn*> columns;
  std::vector<std::string> header = kLockHeader;
  for (const LockColumn& column : lock_columns()) {
    // in lock_fields (a column of the lock's name too, should the table get one)
    if (column.key == "lock" || column.key == "kind" || column.key == "name") continue;
    columns.push_back(&column);
    header.push_back(column_name(column));
  }
  header.push_back("init_site");
  write_record(header, out);
  for (const LockRow& row : rows) {
    std::vector<std::string> fields = lock_fields(row);
    for (const LockColumn* column : columns)
      fields.push_back(fmt::format("{}", std::llround(column->sort_value(row))));
    fields.push_back(row.lock->init_site.known() ? row.lock->init_site.label : "");
    write_record(fields, out);
  }
}

struct SiteColumn {
  const char* name;
  std::function<std::string(const SiteSummary&)> value;
};

std::string number(uint64_t value) {
  return std::to_string(value);
}

const std::vector<SiteColumn>& site_columns() {
  static const std::vector<SiteColumn> columns = {
      {"operation", [](const SiteSummary& s) { return operation_name(s.operation); }},
      {"count", [](const SiteSummary& s) { return number(s.count); }},
      {"contended", [](const SiteSummary& s) { return number(s.contended); }},
      {"failed", [](const SiteSummary& s) { return number(s.failed); }},
      {"wait_ns", [](const SiteSummary& s) { return number(s.wait_sum_ns); }},
      {"wait_max_ns", [](const SiteSummary& s) { return number(s.wait_max_ns); }},
      {"hold_ns", [](const SiteSummary& s) { return number(s.hold_sum_ns); }},
      {"hold_error_ns", [](const SiteSummary& s) { return number(s.hold_error_ns); }},
      {"hold_max_ns", [](const SiteSummary& s) { return number(s.hold_max_ns); }},
      {"holds_timed", [](const SiteSummary& s) { return number(s.hold_samples); }},
      {"cross_cpu", [](const SiteSummary& s) { return number(s.cross_cpu_handoffs); }},
      {"same_cpu", [](const SiteSummary& s) { return number(s.same_cpu_handoffs); }},
      {"function", [](const SiteSummary& s) { return s.location.function; }},
      {"file", [](const SiteSummary& s) { return s.location.file; }},
      {"line", [](const SiteSummary& s) { return s.location.line ? number(s.location.line) : ""; }},
      {"caller", [](const SiteSummary& s) { return s.location.label; }},
      {"inlined_into",
       [](const SiteSummary& s) {
         return s.location.inlined_from.empty() ? "" : s.location.inlined_from.front();
       }},
  };
  return columns;
}

void write_sites(const std::vector<LockRow>& rows, std::ostream& out) {
  std::vector<std::string> header = kLockHeader;
  for (const SiteColumn& column : site_columns()) header.push_back(column.name);
  write_record(header, out);
  for (const LockRow& row : rows)
    for (const SiteSummary& site : row.figures().sites) {
      std::vector<std::string> fields = lock_fields(row);
      for (const SiteColumn& column : site_columns()) fields.push_back(column.value(site));
      write_record(fields, out);
    }
}

class CsvReportWriter final : public ReportWriter {
 public:
  using ReportWriter::write;
  void write(const ProfileViews& views, const ReportOptions& options, ReportSink& sink) override {
    const Profile& profile = views.profile();
    const std::vector<LockRow> rows = sorted_lock_rows(profile, options.sort_key, options.all);
    if (options.table == "sites")
      write_sites(rows, sink.stream());
    else
      write_locks(rows, sink.stream());
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_csv_report_writer() {
  return std::make_unique<CsvReportWriter>();
}

}  // namespace lockscope
