#include "runtime/exec_verdict.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "common/exec_rules.h"
#include "runtime/cancellation.h"

namespace lockscope::runtime {
namespace {

using exec_rules::Linkage;

// The secure-execution rule's verdict on `path` as a reason ("PATH is set-user-ID (owner uid 0)"),
// worded as the CLI words it (program_loadability.cpp); false when it does not apply.
bool secure_execution(const char* path, char* reason, size_t size) {
  unsigned id = 0;
  switch (exec_rules::secure_execution(path, id)) {
    case exec_rules::SecureExecution::kNo:
      return false;
    case exec_rules::SecureExecution::kSetUserId:
      snprintf(reason, size, "%s is set-user-ID (owner uid %u)", path, id);
      return true;
    case exec_rules::SecureExecution::kSetGroupId:
      snprintf(reason, size, "%s is set-group-ID (group gid %u)", path, id);
      return true;
    case exec_rules::SecureExecution::kFileCapabilities:
      snprintf(reason, size, "%s has file capabilities", path);
      return true;
  }
  return false;
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
  NoCancellation no_cancellation;  // no cancellation point of ours (cancellation.h)
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
    const Linkage linkage = exec_rules::linkage_of(fd);
    char interpreter[256];
    const bool script = linkage == Linkage::kNotElf &&
                        exec_rules::script_interpreter(fd, interpreter, sizeof(interpreter));
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
