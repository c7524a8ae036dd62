#include "cli/target_program.h"

#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "analysis/program_loadability.h"
#include "cli/cli_error.h"

namespace lockscope {
namespace {

bool is_regular_file(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

void require_runnable(const std::string& path, const std::string& command) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0)
    throw CliError(fmt::format("command not found: {}", command),
                   "check the spelling, or give a path to the program", kExitNotFound);
  if (S_ISDIR(info.st_mode))
    throw CliError(fmt::format("cannot run '{}': it is a directory", command), "",
                   kExitNotRunnable);
  if (access(path.c_str(), X_OK) != 0)
    throw CliError(fmt::format("cannot run '{}': {}", command, std::strerror(errno)),
                   "make it executable (chmod +x) or run its interpreter", kExitNotRunnable);
}

}  // namespace

std::string resolve_command(const std::string& command) {
  if (command.empty()) throw CliError("empty command", "usage: lockscope run -- CMD [ARGS...]");
  if (command.find('/') != std::string::npos) {
    require_runnable(command, command);
    return command;
  }
  const char* path_variable = std::getenv("PATH");
  std::string search = path_variable ? path_variable : "/usr/local/bin:/usr/bin:/bin";
  std::string found_not_executable;
  size_t start = 0;
  while (start <= search.size()) {
    size_t end = search.find(':', start);
    if (end == std::string::npos) end = search.size();
    // An empty entry is the current directory.
    const std::string directory =
        end > start ? search.substr(start, end - start) : std::string(".");
    const std::string candidate = directory + "/" + command;
    if (is_regular_file(candidate)) {
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
      if (found_not_executable.empty()) found_not_executable = candidate;
    }
    start = end + 1;
  }
  if (!found_not_executable.empty()) require_runnable(found_not_executable, command);
  throw CliError(fmt::format("command not found: {}", command),
                 "check the spelling and PATH, or give a path to the program", kExitNotFound);
}

void check_preloadable(const std::string& path) {
  const Unprofilable why = why_unprofilable(path);
  if (!why.reason.empty())
    throw CliError(fmt::format("'{}' {}", why.program, why.reason), why.hint, kExitNotRunnable);
}

}  // namespace lockscope
