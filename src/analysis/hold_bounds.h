// The hold time physically possible: an exclusive lock is held by one thread at a time, so at most
// for the process's lifetime; a read side by each thread at once. A figure above it (a sampled
// hold standing for N, or measured holds that overlap because each is read after its own call
// returns, a preempted thread's late) is capped there, by the profile reader and the trace's
// summary alike, so that both give the same numbers.
#pragma once

#include <algorithm>
#include <cstdint>

#include "analysis/profile_model.h"

namespace lockscope {

// The most hold time for holds taken by `op` in a process of `duration_ns` with `threads` threads.
inline uint64_t most_held(uint64_t duration_ns, size_t threads, format::Operation op) {
  if (format::is_read_side(op)) return duration_ns * std::max<uint64_t>(1, threads);
  return duration_ns;
}

// A site's hold figures, within them.
inline void cap_site_holds(SiteSummary& site, uint64_t duration_ns, size_t threads) {
  site.hold_sum_ns = std::min(site.hold_sum_ns, most_held(duration_ns, threads, site.operation));
  site.hold_error_ns = std::min(site.hold_error_ns, site.hold_sum_ns);
  site.hold_max_ns = std::min(site.hold_max_ns, duration_ns);
}

// A lock's totals (after LockSummary::finish), within them.
inline void cap_lock_holds(LockSummary& lock, uint64_t duration_ns, size_t threads) {
  const uint64_t shared = duration_ns * std::max<uint64_t>(1, threads);
  const auto cap = [](SideSummary& side, uint64_t most) {
    side.hold_sum_ns = std::min(side.hold_sum_ns, most);
    side.hold_error_ns = std::min(side.hold_error_ns, side.hold_sum_ns);
  };
  cap(lock.write_side, duration_ns);
  cap(lock.read_side, shared);
  cap(lock, lock.read_side.acquisitions ? shared : duration_ns);
}

}  // namespace lockscope
