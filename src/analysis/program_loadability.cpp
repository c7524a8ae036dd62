#include "analysis/program_loadability.h"

#include <elf.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace lockscope {
namespace {

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

// The kernel's secure-execution rule (AT_SECURE): the exec changes the effective ids, or file
// capabilities raise a non-root user's privileges.
std::string secure_execution(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) return {};
  if ((info.st_mode & S_ISUID) && info.st_uid != geteuid())
    return fmt::format("is set-user-ID (owner uid {})", info.st_uid);
  if ((info.st_mode & S_ISGID) && (info.st_mode & S_IXGRP) && info.st_gid != getegid())
    return fmt::format("is set-group-ID (group gid {})", info.st_gid);
  if (geteuid() != 0 && getxattr(path.c_str(), "security.capability", nullptr, 0) > 0)
    return "has file capabilities";
  return {};
}

}  // namespace

Unprofilable why_unprofilable(const std::string& path) {
  std::string program = path;
  for (int depth = 0; depth < 4; ++depth) {
    if (std::string secure = secure_execution(program); !secure.empty())
      return {program, secure + ": the kernel runs it in secure-execution mode, where the loader "
                                "ignores LD_PRELOAD",
              "run lockscope as the program's user (e.g. with sudo -u), or profile a copy without "
              "the bit or capabilities"};
    switch (elf_linkage(program)) {
      case Linkage::kDynamic: return {program, {}, {}};
      case Linkage::kStatic:
        return {program,
                "is statically linked: lockscope preloads its runtime into the program, which a "
                "static program never loads",
                "rebuild it dynamically linked (without -static) to profile its locks"};
      case Linkage::kNotElf: {
        const std::string interpreter = script_interpreter(program);
        if (interpreter.empty()) return {program, {}, {}};  // let exec report what it is
        program = interpreter;
        break;
      }
    }
  }
  return {program, {}, {}};
}

}  // namespace lockscope
