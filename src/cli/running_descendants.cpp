#include "cli/running_descendants.h"

#include <filesystem>
#include <optional>
#include <string>

#include "common/running_marker.h"

namespace lockscope {
namespace fs = std::filesystem;

namespace {

std::optional<format::ProcessStat> process_stat(pid_t pid) {
  format::ProcessStat stat;
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  if (!format::read_process_stat(path.c_str(), stat)) return std::nullopt;
  return stat;
}

}  // namespace

std::vector<pid_t> running_descendants(const std::string& directory) {
  std::vector<pid_t> running;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    uint32_t pid = 0;
    uint64_t start_ticks = 0;
    if (!format::parse_running_marker_name(name.data(), name.size(), pid, start_ticks)) continue;
    const auto stat = process_stat(static_cast<pid_t>(pid));
    if (stat && stat->start_ticks == start_ticks && !stat->ended())
      running.push_back(static_cast<pid_t>(pid));
    else
      fs::remove(entry.path(), error);  // gone without its final write; an error: already removed
  }
  return running;
}

}  // namespace lockscope
