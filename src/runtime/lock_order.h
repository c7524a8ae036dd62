// Lock order: which locks a thread takes while holding which (an edge from its innermost held lock
// to the lock it now acquires with a blocking call), each edge kept once per process with the
// first thread and call sites that made it. The CLI finds cycles in these edges: lock-order
// inversions, deadlocks that can happen even if this run never hit one.
//
// Cost: the fast path compares the entry of the acquisition with the last one taken under a hold
// from the innermost held lock's acquire site (SiteStats::order_to) and comes here only when they
// differ; here a lock-free probe of a process-wide index, and only for an edge not yet known the
// internal lock, to insert it. A trylock is never the edge's target: it
// does not wait, so it cannot close a deadlock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "runtime/chunked_array.h"
#include "runtime/internal_lock.h"

namespace lockscope::runtime {

// An edge's locks: what makes it the same edge as another.
struct OrderLocks {
  uint32_t from_slot;  // the lock held (LockTable slot and generation)
  uint32_t from_generation;
  uint32_t to_slot;  // the lock acquired while holding it
  uint32_t to_generation;
};

struct OrderEdge : OrderLocks {
  uintptr_t from_site;      // where the held lock was acquired (0: not known)
  uintptr_t to_site;        // where the other was acquired while it was held
  uint32_t tid;             // the first thread that did so
  uint16_t to_operation;    // format::Operation of that acquisition
  uint16_t from_operation;  // how the held lock was acquired (0: not known)
  // The call stack of that acquisition, from `to_site` outwards (0 frames: not captured).
  static constexpr uint32_t kMaxStackDepth = 16;
  uint32_t stack_depth;
  uintptr_t stack[kMaxStackDepth];
};

class LockOrderTable {
 public:
  // Adds the edge unless (from, to) is known; false when it was known or memory was refused
  // (then counted in dropped()). Must be called marked inside lockscope (the lock is internal).
  bool insert(const OrderEdge& edge);
  // Whether an edge with the same locks is known (lock-free: it may miss one being inserted).
  bool contains(const OrderLocks& locks) const {
    return find(index_.load(std::memory_order_acquire), locks) != 0;
  }
  // Edges [0, size()) may be read while others are inserted.
  size_t size() const { return edges_.size(); }
  const OrderEdge& edge(size_t i) const { return edges_[i]; }
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  // After fork(), in the child: the child's profile starts without the parent's edges.
  void reset_after_fork();

 private:
  static uint64_t hash(const OrderLocks& edge);
  // An index slot: the edge's number + 1 (0 = empty) and its locks, so that a probe compares keys
  // in the index's own lines instead of loading each edge it meets (a server's tens of thousands
  // of edges, ~200 bytes each, are a cache miss apiece). The locks are written before the number
  // is published (release) and never change after.
  struct IndexSlot {
    std::atomic<uint32_t> number;
    uint32_t from_slot;
    uint32_t from_generation;
    uint32_t to_slot;
    uint32_t to_generation;
  };
  // Open addressing. Replaced by a twice larger one when half full; the old one stays mapped (a
  // lock-free reader may still probe it; it finds no edge added since, and then looks again under
  // the lock).
  struct Index {
    size_t capacity;  // a power of two
    IndexSlot* slots() { return reinterpret_cast<IndexSlot*>(this + 1); }
  };
  static bool same_locks(const IndexSlot& slot, const OrderLocks& edge) {
    return slot.from_slot == edge.from_slot && slot.from_generation == edge.from_generation &&
           slot.to_slot == edge.to_slot && slot.to_generation == edge.to_generation;
  }
  // Fills a free slot of `index` (the locks, then the number, published).
  static void place(Index* index, const OrderLocks& edge, uint32_t number_plus_one);
  // The number + 1 of the edge with the same locks in `index`, 0 when none.
  uint32_t find(Index* index, const OrderLocks& edge) const;
  Index* grow_index();  // under lock_

  ChunkedArray<OrderEdge, 8> edges_;
  std::atomic<Index*> index_{nullptr};
  std::atomic<uint64_t> dropped_{0};
  InternalLock lock_;
};

}  // namespace lockscope::runtime
