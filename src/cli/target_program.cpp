#include "cli/target_program.h"

#include <elf.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

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
    throw CliError(fmt::format("cannot run '{}': it is a directory", command), "", kExitNotRunnable);
  if (access(path.c_str(), X_OK) != 0)
    throw CliError(fmt::format("cannot run '{}': {}", command, std::strerror(errno)),
                   "make it executable (chmod +x) or run its interpreter", kExitNotRunnable);
}

enum class Linkage { kDynamic, kStatic, kNotElf };

Linkage elf_linkage(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr header{};
  if (!in.read(reinterpret_cast<char*>(&header), sizeof(header))) return Linkage::kNotElf;
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) return Linkage::kNotElf;
  if (header.e_ident[EI_CLASS] != ELFCLASS64) return Linkage::kDynamic;  // let the loader decide
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment{};
    in.seekg(static_cast<std::streamoff>(header.e_phoff + uint64_t{i} * header.e_phentsize));
    if (!in.read(reinterpret_cast<char*>(&segment), sizeof(segment))) break;
    if (segment.p_type == PT_INTERP) return Linkage::kDynamic;
  }
  return Linkage::kStatic;
}

std::string script_interpreter(const std::string& path) {
  std::ifstream in(path);
  std::string first_line;
  if (!std::getline(in, first_line) || first_line.rfind("#!", 0) != 0) return {};
  std::istringstream words(first_line.substr(2));
  std::string interpreter;
  words >> interpreter;
  return interpreter;
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
    std::string directory = search.substr(start, end - start);
    if (directory.empty()) directory = ".";
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
  std::string program = path;
  for (int depth = 0; depth < 4; ++depth) {
    switch (elf_linkage(program)) {
      case Linkage::kDynamic: return;
      case Linkage::kStatic:
        throw CliError(
            fmt::format("'{}' is statically linked: lockscope preloads its runtime into the "
                        "program, which a static program never loads",
                        program),
            "rebuild it dynamically linked (without -static) to profile its locks",
            kExitNotRunnable);
      case Linkage::kNotElf: {
        const std::string interpreter = script_interpreter(program);
        if (interpreter.empty()) return;  // let exec report what it is
        program = interpreter;
        break;
      }
    }
  }
}

}  // namespace lockscope
