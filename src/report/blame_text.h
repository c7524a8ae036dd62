// The text report's "who made them wait" lines under a lock's call sites: for each site that
// waited, the acquire sites of the holds it waited behind; and, when several sites waited, the
// holders' sites with the total wait they caused.
#pragma once

#include <ostream>
#include <vector>

#include "analysis/profile_model.h"

namespace lockscope {

// `sites`: one lock's (or rwlock side's) call sites, in the order they are listed.
void write_blame(const std::vector<const SiteSummary*>& sites, std::ostream& out);
// For each site that waited, the call stacks it waited from (the top `top`), frame by frame.
void write_wait_stacks(const ProcessProfile& process, const std::vector<const SiteSummary*>& sites,
                       size_t top, std::ostream& out);

}  // namespace lockscope
