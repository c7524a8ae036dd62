#include "cli/running_descendants.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <optional>
#include <string>

#include "common/running_marker.h"

namespace lockscope {
namespace fs = std::filesystem;

namespace {

std::optional<format::ProcessStat> process_stat(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char text[1024];
  ssize_t got;
  do {
    got = read(fd, text, sizeof(text));
  } while (got < 0 && errno == EINTR);
  close(fd);
  format::ProcessStat stat;
  if (got <= 0 || !format::parse_process_stat(text, static_cast<size_t>(got), stat))
    return std::nullopt;
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
