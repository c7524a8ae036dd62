// The profiled processes of a `record`/`run` that are still running, found through the running
// markers in the profile directory (common/running_marker.h) rather than by being their parent or
// subreaper: a daemon the program starts keeps the parent it would have without lockscope.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace lockscope {

// The pids of the processes with a marker in `directory` that are still alive (the same start
// time, not a zombie). The markers of processes that are gone (killed with SIGKILL, or the pid now
// belongs to another process) are removed.
std::vector<pid_t> running_descendants(const std::string& directory);

}  // namespace lockscope
