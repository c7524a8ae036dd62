// Why lockscope's runtime would not be loaded into a program, read from the file itself: it is
// statically linked (no PT_INTERP: the dynamic loader never runs, LD_PRELOAD is ignored), or the
// kernel runs it in secure-execution mode (set-user-ID or set-group-ID to someone else, or file
// capabilities for a non-root user), where the loader ignores LD_PRELOAD. Scripts are followed to
// their #! interpreter. Used before running a program (the CLI refuses it with a clear error) and
// in reports (a profiled process exec'd a program that left no profile).
#pragma once

#include <string>

namespace lockscope {

struct Unprofilable {
  std::string program;  // the file concerned (the interpreter of a script)
  std::string reason;   // "is statically linked", "is set-user-ID (owner uid 0)", ...; "" when fine
  std::string hint;     // what to do about it
};

// Empty `reason` when the runtime can be preloaded into `path` (or when that cannot be told).
Unprofilable why_unprofilable(const std::string& path);

}  // namespace lockscope
