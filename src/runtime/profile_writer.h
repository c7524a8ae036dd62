// Writes this process's profile file: everything recorded so far by every thread (live threads are
// read as they are: their latest counts may be incomplete, and the file says how many there were).
// Side-effect free on the recording state, so a failed exec can discard the file and go on.
#pragma once

#include "common/profile_format.h"

namespace lockscope::runtime {

// Returns true when written; `path_out` (>= 4096 bytes) receives the file name. From a signal
// handler (`from_signal`), the internal lock is only tried: the interrupted code may hold it.
bool write_profile(format::ExitPath exit_path, int exit_status, char* path_out,
                   bool from_signal = false);

// The process's profile file, DIRECTORY/PID-START.lsprof, into `out` (>= 4096 bytes); false when
// the name does not fit (a directory name near PATH_MAX: cut short, it could be another file's).
bool profile_path(char* out);

}  // namespace lockscope::runtime
