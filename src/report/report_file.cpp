#include "report/report_file.h"

#include <fmt/core.h>

#include <filesystem>
#include <stdexcept>

namespace lockscope {

void write_report_file(ReportWriter& writer, const Profile& profile, const ReportOptions& options,
                       const std::string& output) {
  const std::string temporary = output + ".tmp";
  const auto failed = [&](const std::string& why, bool file_problem) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    return ReportFileError(fmt::format("cannot write the report to '{}': {}", output, why),
                           file_problem);
  };
  try {
    ReportSink sink(temporary);
    writer.write(profile, options, sink);
    sink.finish();
  } catch (const ReportSinkError& error) {
    throw failed(error.what(), true);
  } catch (const std::invalid_argument&) {
    // The format cannot show this profile (chrome without a trace): the writer's own words.
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw;
  } catch (const std::exception& error) {
    throw failed(error.what(), false);
  }
  std::error_code error;
  std::filesystem::rename(temporary, output, error);
  if (error) throw failed(error.message(), true);
}

}  // namespace lockscope
