// The text report's notes on traces (record --trace): what each process's trace holds, what it
// lost and why, the --min-wait filter, and a process cut short whose figures come from its trace.
#pragma once

#include <string>
#include <vector>

#include "analysis/profile_model.h"

namespace lockscope {

void add_trace_notes(const Profile& profile, std::vector<std::string>& notes);

}  // namespace lockscope
