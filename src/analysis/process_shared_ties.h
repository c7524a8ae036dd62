// Ties between the process-shared locks of different processes: after fork, one lock in shared
// memory is recorded by each process that uses it, as a lock of its own. A report names, beside
// each, the other processes that used the same lock.
//
// The same lock: a process-shared lock of the same address and generation in another process of
// the same family (fork/exec chains, as far as the profile knows them). Another generation, or an
// unrelated process at the same address, is another lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "analysis/profile_model.h"

namespace lockscope {

// Per process (in the profile's order): its process-shared locks (index into its locks) that
// other processes used too, with those processes' pids, each once, in the profile's order. Worked
// out once per report: looking through every other process's locks for each lock listed made a
// report of every lock quadratic in locks.
std::vector<std::map<size_t, std::vector<uint32_t>>> find_process_shared_ties(
    const Profile& profile);

}  // namespace lockscope
