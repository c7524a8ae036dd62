// Whether lockscope's runtime can be preloaded into a program, read from the file itself: the rules
// both sides apply — the CLI before running a program and in reports
// (analysis/program_loadability.cpp), the runtime before a profiled process execs one
// (runtime/exec_verdict.cpp). libc only, nothing allocated: the runtime includes it.
//
// A statically linked program (no PT_INTERP) never runs the dynamic loader; a program the kernel
// runs in secure-execution mode (AT_SECURE) has LD_PRELOAD ignored by it; a script is judged by
// its #! interpreter.
#pragma once

#include <elf.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace lockscope::exec_rules {

enum class Linkage { kDynamic, kStatic, kNotElf };

// Read from an open file. Not an ELF file (or too short to be one): kNotElf; an ELF file this
// cannot read through: kDynamic (not ours to judge: exec will say).
inline Linkage linkage_of(int fd) {
  Elf64_Ehdr header;
  if (pread(fd, &header, sizeof(header), 0) != sizeof(header) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
    return Linkage::kNotElf;
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_phentsize != sizeof(Elf64_Phdr))
    return Linkage::kDynamic;
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    if (pread(fd, &segment, sizeof(segment),
              static_cast<off_t>(header.e_phoff + uint64_t{i} * sizeof(segment))) !=
        sizeof(segment))
      return Linkage::kDynamic;
    if (segment.p_type == PT_INTERP) return Linkage::kDynamic;
  }
  return Linkage::kStatic;
}

enum class SecureExecution { kNo, kSetUserId, kSetGroupId, kFileCapabilities };

// The kernel's secure-execution rule: the exec changes the effective ids (set-user-ID to another
// owner, set-group-ID to another group: `id` gets that uid or gid), or file capabilities raise a
// non-root user's privileges.
inline SecureExecution secure_execution(const char* path, unsigned& id) {
  struct stat info;
  if (stat(path, &info) != 0) return SecureExecution::kNo;
  if ((info.st_mode & S_ISUID) && info.st_uid != geteuid()) {
    id = info.st_uid;
    return SecureExecution::kSetUserId;
  }
  if ((info.st_mode & S_ISGID) && (info.st_mode & S_IXGRP) && info.st_gid != getegid()) {
    id = info.st_gid;
    return SecureExecution::kSetGroupId;
  }
  if (geteuid() != 0 && getxattr(path, "security.capability", nullptr, 0) > 0)
    return SecureExecution::kFileCapabilities;
  return SecureExecution::kNo;
}

// A script's interpreter (the first word after "#!", within the 256 bytes the kernel reads), into
// `out`; false when the file is not a script.
inline bool script_interpreter(int fd, char* out, size_t size) {
  char line[256];
  const ssize_t length = pread(fd, line, sizeof(line) - 1, 0);
  if (length < 3 || line[0] != '#' || line[1] != '!') return false;
  line[length] = '\0';
  const char* begin = line + 2;
  while (*begin == ' ' || *begin == '\t') ++begin;
  size_t n = 0;
  while (begin[n] && begin[n] != ' ' && begin[n] != '\t' && begin[n] != '\n' && n + 1 < size) {
    out[n] = begin[n];
    ++n;
  }
  out[n] = '\0';
  return n > 0;
}

}  // namespace lockscope::exec_rules
