// The text report's hold time by call stack under a lock's call sites: the stacks its timed holds
// were released from, most hold time first, frame by frame.
#pragma once

#include <ostream>
#include <vector>

#include "analysis/profile_model.h"
#include "report/stack_ids.h"

namespace lockscope {

// The top `top` stacks over `sites` (one lock's, or an rwlock side's), each with its share of the
// hold time of the holds whose stack was captured (frame by frame the first time the report shows
// it, by its id after); nothing when none was.
void write_hold_stacks(const ProcessProfile& process, const std::vector<const SiteSummary*>& sites,
                       size_t top, StackIds& stacks, std::ostream& out);

}  // namespace lockscope
