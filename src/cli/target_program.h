// Finding the program to profile and checking, before running it, that preloading can work:
// PATH lookup like execvp (127 when not found, 126 when not executable), and ELF inspection so a
// statically linked program (no PT_INTERP: the dynamic loader never runs, LD_PRELOAD is ignored) is
// refused with a clear error instead of silently producing an empty profile. Scripts are followed
// to their interpreter.
#pragma once

#include <string>

namespace lockscope {

// Absolute or relative path of the executable for `command`; throws CliError (127/126).
std::string resolve_command(const std::string& command);

// Throws CliError (126) when the runtime cannot be preloaded into `path` (or its #! interpreter):
// a static ELF executable, or one the kernel runs in secure-execution mode (program_loadability.h).
void check_preloadable(const std::string& path);

}  // namespace lockscope
