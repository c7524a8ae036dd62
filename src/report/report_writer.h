// One writer per output format, each over the neutral Profile model and an std::ostream; no writer
// reads files or knows another format.
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/profile_model.h"
#include "analysis/wait_attribution.h"

namespace lockscope {

struct ReportOptions {
  std::string sort_key = "wait";  // a key of lock_columns() (see `lockscope report --help`)
  size_t top = 10;                // locks listed in detail
  bool all = false;               // every lock, including those never acquired
  std::string command;            // for the header: "lockscope run -- ..." when known
  // --caller-depth / --skip-frames: contended waits by the first frame outside the wrappers
  std::optional<WaitAttributionRule> attribution;
};

class ReportWriter {
 public:
  virtual ~ReportWriter() = default;
  virtual void write(const Profile& profile, const ReportOptions& options, std::ostream& out) = 0;
};

// Known formats: "text", "json". Throws std::invalid_argument naming the known ones otherwise.
std::unique_ptr<ReportWriter> make_report_writer(const std::string& format);
std::vector<std::string> report_formats();
// "json" for "x.json", "text" for anything else (".txt", no extension).
std::string format_for_path(const std::string& path);

std::unique_ptr<ReportWriter> make_text_report_writer();
std::unique_ptr<ReportWriter> make_json_report_writer();

}  // namespace lockscope
