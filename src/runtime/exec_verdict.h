// What an exec is about to run, decided before it runs, where it is true: the file a PATH search
// finds (as execvp would, against this process's PATH and working directory), and whether
// lockscope's runtime will be loaded into it. A static program (no PT_INTERP) never loads it; one
// the kernel runs in secure-execution mode (set-user-ID or set-group-ID to another user, or file
// capabilities for a non-root user) has LD_PRELOAD ignored. A script is judged by its #!
// interpreter. The profile keeps the verdict (ExecVerdict::pack), so a report read elsewhere, by
// another user or from another directory, says the same as this process would.
//
// libc only, no allocation (an exec may follow a fork of a multithreaded program).
#pragma once

#include <cstddef>

namespace lockscope::runtime {

struct ExecVerdict {
  char resolved[1024];     // the file exec will run ("" when not found: the exec will fail)
  char reason[1024 + 64];  // "FILE is statically linked", ...: "" when the runtime will load
};

// `search_path`: execvp/execvpe/execlp, whose name without a '/' is looked up in PATH.
void judge_exec(const char* named, bool search_path, ExecVerdict& verdict);

// NAMED\0RESOLVED\0REASON\0 into `out` (each cut to fit); returns the bytes used (0: no name).
size_t pack_exec_target(const char* named, const ExecVerdict& verdict, char* out, size_t size);

}  // namespace lockscope::runtime
