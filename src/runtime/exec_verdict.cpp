#include "runtime/exec_verdict.h"

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstring>

namespace lockscope::runtime {
namespace {

enum class Linkage { kDynamic, kStatic, kNotElf };

// Read from the file; anything unreadable counts as dynamic (not ours to judge: exec will say).
Linkage linkage_of(int fd) {
  Elf64_Ehdr header;
  if (pread(fd, &header, sizeof(header), 0) != sizeof(header) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
    return Linkage::kNotElf;
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_phentsize != sizeof(Elf64_Phdr))
    return Linkage::kDynamic;
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    if (pread(fd, &segment, sizeof(segment),
              static_cast<off_t>(header.e_phoff + i * sizeof(segment))) != sizeof(segment))
      return Linkage::kDynamic;
    if (segment.p_type == PT_INTERP) return Linkage::kDynamic;
  }
  return Linkage::kStatic;
}

// The kernel's secure-execution rule (AT_SECURE), as the CLI states it (program_loadability.cpp).
bool secure_execution(const char* path, char* reason, size_t size) {
  struct stat info;
  if (stat(path, &info) != 0) return false;
  if ((info.st_mode & S_ISUID) && info.st_uid != geteuid()) {
    snprintf(reason, size, "%s is set-user-ID (owner uid %u)", path, info.st_uid);
    return true;
  }
  if ((info.st_mode & S_ISGID) && (info.st_mode & S_IXGRP) && info.st_gid != getegid()) {
    snprintf(reason, size, "%s is set-group-ID (group gid %u)", path, info.st_gid);
    return true;
  }
  if (geteuid() != 0 && getxattr(path, "security.capability", nullptr, 0) > 0) {
    snprintf(reason, size, "%s has file capabilities", path);
    return true;
  }
  return false;
}

// A script's interpreter (the first word after "#!"), into `out`; false when not a script.
bool script_interpreter(int fd, char* out, size_t size) {
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

bool executable_file(const char* path) {
  struct stat info;
  return stat(path, &info) == 0 && S_ISREG(info.st_mode) && access(path, X_OK) == 0;
}

// As glibc's execvpe: each PATH entry in turn (an empty one is the working directory; no PATH:
// /bin:/usr/bin), the first executable regular file.
void search_path(const char* name, char* out, size_t size) {
  out[0] = '\0';
  const char* path = getenv("PATH");
  if (!path) path = "/bin:/usr/bin";
  for (const char* entry = path;;) {
    const char* end = std::strchr(entry, ':');
    const size_t length = end ? static_cast<size_t>(end - entry) : std::strlen(entry);
    const int written = length == 0
                            ? snprintf(out, size, "%s", name)
                            : snprintf(out, size, "%.*s/%s", static_cast<int>(length), entry, name);
    if (written > 0 && static_cast<size_t>(written) < size && executable_file(out)) return;
    if (!end) break;
    entry = end + 1;
  }
  out[0] = '\0';
}

}  // namespace

void judge_exec(const char* named, bool search, ExecVerdict& verdict) {
  verdict.resolved[0] = verdict.reason[0] = '\0';
  if (!named || !*named) return;
  if (search && !std::strchr(named, '/'))
    search_path(named, verdict.resolved, sizeof(verdict.resolved));
  else
    snprintf(verdict.resolved, sizeof(verdict.resolved), "%s", named);
  char program[1024];
  snprintf(program, sizeof(program), "%s", verdict.resolved);
  for (int depth = 0; depth < 4 && program[0]; ++depth) {
    if (secure_execution(program, verdict.reason, sizeof(verdict.reason))) return;
    const int fd = open(program, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    const Linkage linkage = linkage_of(fd);
    char interpreter[256];
    const bool script =
        linkage == Linkage::kNotElf && script_interpreter(fd, interpreter, sizeof(interpreter));
    close(fd);
    if (linkage == Linkage::kStatic) {
      snprintf(verdict.reason, sizeof(verdict.reason), "%s is statically linked", program);
      return;
    }
    if (!script) return;
    snprintf(program, sizeof(program), "%s", interpreter);
  }
}

size_t pack_exec_target(const char* named, const ExecVerdict& verdict, char* out, size_t size) {
  if (!named || !*named || size < 3) return 0;
  size_t used = 0;
  const char* const texts[] = {named, verdict.resolved, verdict.reason};
  for (const char* text : texts) {
    size_t length = std::strlen(text);
    if (used + length + 1 > size) length = size > used + 1 ? size - used - 1 : 0;
    std::memcpy(out + used, text, length);
    out[used + length] = '\0';
    used += length + 1;
    if (used >= size) return size;
  }
  return used;
}

}  // namespace lockscope::runtime
