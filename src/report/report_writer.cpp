#include "report/report_writer.h"

#include <fmt/core.h>

#include <filesystem>
#include <stdexcept>

namespace lockscope {

std::vector<std::string> report_formats() { return {"text", "json"}; }

std::unique_ptr<ReportWriter> make_report_writer(const std::string& format) {
  if (format == "text") return make_text_report_writer();
  if (format == "json") return make_json_report_writer();
  throw std::invalid_argument(fmt::format("unknown report format '{}' (known: text, json)", format));
}

std::string format_for_path(const std::string& path) {
  const std::string extension = std::filesystem::path(path).extension().string();
  if (extension == ".json") return "json";
  return "text";
}

}  // namespace lockscope
