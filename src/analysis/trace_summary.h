// The figures of summary mode, computed from a process's trace events alone: how the report of a
// process cut short (killed after its last snapshot) still shows every event up to the end, and
// how the tests check that a trace and the summary tables say the same.
#pragma once

#include <vector>

#include "analysis/profile_model.h"

namespace lockscope {

struct TraceSummary {
  std::vector<LockSummary> locks;      // finished (totals computed), identity from the profile
  std::vector<ThreadSummary> threads;  // one per traced thread
};

// Counts, contention, failures, waits (exact, in the runtime's own tick conversion) and holds
// (exact: every hold is in the trace) per lock and call site; owner changes as the runtime
// counted them (flagged on each acquisition: an order by the clock would need every CPU's clock to
// agree to within a handoff, which guests' do not). A lock the profile knows keeps its kind, flags
// and init site. Needs a trace without --min-wait and with nothing lost for its counts to be
// complete.
TraceSummary summarize_trace(const ProcessProfile& process);

// Replaces the process's locks and threads by those of its trace (a snapshot's are older); what
// the trace does not carry (stacks, blame, CPU handoffs, lock order) is left as the snapshot had
// it.
void rebuild_from_trace(ProcessProfile& process);

}  // namespace lockscope
