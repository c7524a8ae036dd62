// The text report's last part: "nothing dropped: ..." or "notes:", one line per fact that changes
// how to read the numbers (sampled holds, snapshots, exec'd programs not profiled, dead owners,
// the runtime's drop counters, modules without debug info, files not read).
#pragma once

#include <ostream>

#include "analysis/profile_model.h"

namespace lockscope {
void write_footer(const Profile& profile, std::ostream& out);
}  // namespace lockscope
