#include "report/report_file.h"

#include <fmt/core.h>

#include <filesystem>
#include <stdexcept>

namespace lockscope {

namespace {

// Where the report goes: `output`, or the regular file a symbolic link `output` names; `direct`:
// written into as it is (not a regular file, or a link that leads to none).
struct ReportTarget {
  std::string path;
  bool direct = false;
};

ReportTarget report_target(const std::string& output) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::file_status own = fs::symlink_status(output, error);
  if (error || !fs::exists(own)) return {output, false};
  const fs::file_status followed = fs::status(output, error);
  if (error || !fs::is_regular_file(followed)) return {output, true};
  if (!fs::is_symlink(own)) return {output, false};
  const fs::path resolved = fs::canonical(output, error);
  return error ? ReportTarget{output, true} : ReportTarget{resolved.string(), false};
}

}  // namespace

void write_report_file(ReportWriter& writer, const Profile& profile, const ReportOptions& options,
                       const std::string& output) {
  const ReportTarget target = report_target(output);
  const std::string written = target.direct ? target.path : target.path + ".tmp";
  const auto remove_temporary = [&] {
    std::error_code ignored;
    if (!target.direct) std::filesystem::remove(written, ignored);
  };
  const auto failed = [&](const std::string& why, bool file_problem) {
    remove_temporary();
    return ReportFileError(fmt::format("cannot write the report to '{}': {}", output, why),
                           file_problem);
  };
  try {
    ReportSink sink(written);
    writer.write(profile, options, sink);
    sink.finish();
  } catch (const ReportSinkError& error) {
    throw failed(error.what(), true);
  } catch (const std::invalid_argument&) {
    // The format cannot show this profile (chrome without a trace): the writer's own words.
    remove_temporary();
    throw;
  } catch (const std::exception& error) {
    throw failed(error.what(), false);
  }
  if (target.direct) return;
  std::error_code error;
  std::filesystem::rename(written, target.path, error);
  if (error) throw failed(error.message(), true);
}

}  // namespace lockscope
