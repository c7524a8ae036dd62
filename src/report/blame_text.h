// The text report's "who made them wait" lines under a lock's call sites: for each site that
// waited, the acquire sites of the holds it waited behind; and, when several sites waited, the
// holders' sites with the total wait they caused. Then where the waits came from: their call
// stacks, the holders' stacks, and (--caller-depth, --skip-frames) the callers outside the lock's
// wrappers.
#pragma once

#include <ostream>
#include <vector>

#include "analysis/profile_model.h"
#include "analysis/wait_attribution.h"
#include "report/stack_ids.h"

namespace lockscope {

// A blame row whose holder is not known: a wait behind an rwlock's readers (no one holder), or
// one the holder's release did not see coming (a plain mutex's waiter that took the lock as soon
// as it looked: the holder publishes its site only for a waiter it sees, docs/runtime.md).
inline constexpr char kUnknownHolderLabel[] =
    "(not known: behind readers, or released before the wait was seen)";

// `sites`: one lock's (or rwlock side's) call sites, in the order they are listed.
void write_blame(const std::vector<const SiteSummary*>& sites, std::ostream& out);
// The call stacks the sites' waits came from, the top `top` over all of them (a lock's, across its
// call sites: each stack starts at its call site), frame by frame the first time the report
// shows each (`stacks`), by its id after.
void write_wait_stacks(const ProcessProfile& process, const std::vector<const SiteSummary*>& sites,
                       size_t top, StackIds& stacks, std::ostream& out);
// The call stacks of the holds the sites' waits were behind (of their acquisition, or at their
// release), the top `top` by the wait they caused, each with the holder's acquire site: "who made
// them wait", past the lock's wrappers.
void write_holder_stacks(const ProcessProfile& process,
                         const std::vector<const SiteSummary*>& sites, size_t top, StackIds& stacks,
                         std::ostream& out);
// A lock's contended waits by the frame `rule` attributes them to, with its share of their wait;
// then the waits without a captured stack, which stay at their call site.
void write_wait_attribution(const WaitAttribution& attribution, const WaitAttributionRule& rule,
                            std::ostream& out);

}  // namespace lockscope
