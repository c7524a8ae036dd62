// Lock-order inversions: cycles in a process's lock-order edges (a thread held A while taking B,
// and some thread held B while taking A, possibly through other locks). Each is a deadlock that
// can happen when the threads interleave, whether or not this run hit it.
#pragma once

#include <cstddef>
#include <vector>

#include "analysis/profile_model.h"

namespace lockscope {

struct LockOrderInversion {
  // Indices into ProcessProfile::lock_order, in cycle order: each edge's to_lock is the next
  // one's from_lock, and the last one's the first one's. Starts at the edge from the lowest lock.
  std::vector<size_t> edges;
};

// Every pair of locks taken in both orders is one inversion (two edges); a cycle through three or
// more locks with no such pair inside it is reported once, as one of its shortest cycles. Ordered
// by the locks involved. A cycle counts only if each edge's acquisition can wait for the way the
// next edge holds that lock: a read lock does not wait for readers (glibc's rwlocks prefer readers
// by default), so a cycle of read locks held and taken is no deadlock.
std::vector<LockOrderInversion> find_lock_order_inversions(const ProcessProfile& process);

}  // namespace lockscope
