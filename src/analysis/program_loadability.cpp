#include "analysis/program_loadability.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include "common/exec_rules.h"

namespace lockscope {
namespace {

using exec_rules::Linkage;

// The secure-execution rule's verdict (common/exec_rules.h) as words; "" when it does not apply.
std::string secure_execution(const std::string& path) {
  unsigned id = 0;
  switch (exec_rules::secure_execution(path.c_str(), id)) {
    case exec_rules::SecureExecution::kNo:
      return {};
    case exec_rules::SecureExecution::kSetUserId:
      return fmt::format("is set-user-ID (owner uid {})", id);
    case exec_rules::SecureExecution::kSetGroupId:
      return fmt::format("is set-group-ID (group gid {})", id);
    case exec_rules::SecureExecution::kFileCapabilities:
      return "has file capabilities";
  }
  return {};
}

// The file's linkage and, for a script, its interpreter; kNotElf with no interpreter when the
// file cannot be opened (exec will say what it is).
Linkage linkage_of(const std::string& path, std::string& interpreter) {
  interpreter.clear();
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Linkage::kNotElf;
  const Linkage linkage = exec_rules::linkage_of(fd);
  char found[256];
  if (linkage == Linkage::kNotElf && exec_rules::script_interpreter(fd, found, sizeof(found)))
    interpreter = found;
  close(fd);
  return linkage;
}

}  // namespace

Unprofilable why_unprofilable(const std::string& path) {
  std::string program = path;
  for (int depth = 0; depth < 4; ++depth) {
    if (std::string secure = secure_execution(program); !secure.empty())
      return {program,
              secure +
                  ": the kernel runs it in secure-execution mode, where the loader "
                  "ignores LD_PRELOAD",
              "run lockscope as the program's user (e.g. with sudo -u), or profile a copy without "
              "the bit or capabilities"};
    std::string interpreter;
    switch (linkage_of(program, interpreter)) {
      case Linkage::kDynamic:
        return {program, {}, {}};
      case Linkage::kStatic:
        return {program,
                "is statically linked: lockscope preloads its runtime into the program, which a "
                "static program never loads",
                "rebuild it dynamically linked (without -static) to profile its locks"};
      case Linkage::kNotElf:
        if (interpreter.empty()) return {program, {}, {}};  // let exec report what it is
        program = interpreter;
        break;
    }
  }
  return {program, {}, {}};
}

}  // namespace lockscope
