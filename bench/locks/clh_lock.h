// CLH queue lock (Craig; Landin & Hagersten): each waiter spins on its predecessor's node; a
// releaser leaves its node behind for the successor and takes the predecessor's node with it.
//
// Strictly FIFO-fair, never parks, one line transfer per handoff. Nodes migrate between threads, so
// the node pool is owned jointly (one node per lock + one per thread; see node_pool.h). Poor on
// NUMA without cache coherence locality, and it convoys when oversubscribed like every fair
// spinlock.
#pragma once

#include <atomic>
#include <string_view>

#include "bench/locks/lock_concept.h"
#include "bench/locks/node_pool.h"

namespace lockscope::lab {

class ClhLock {
 public:
  static constexpr std::string_view kName = "clh";

  struct alignas(kCacheLine) Node {
    std::atomic<bool> held{false};
    Node* predecessor = nullptr;  // written and read only by the node's current owner
  };

  // Invariant: the queue always holds one node, the tail; when the lock is free the tail is not
  // held. Nodes come from NodePool: try_lock may read a node it does not own, so nodes are never
  // deleted.
  ClhLock() : tail_(NodePool<Node>::take()) { tail_.load()->held.store(false); }
  ~ClhLock() { NodePool<Node>::give_back(tail_.load(std::memory_order_relaxed)); }
  ClhLock(const ClhLock&) = delete;
  ClhLock& operator=(const ClhLock&) = delete;

  void lock(Node*& node) {
    node->held.store(true, std::memory_order_relaxed);
    Node* predecessor = tail_.exchange(node, std::memory_order_acq_rel);
    node->predecessor = predecessor;
    SpinWait spin;
    while (predecessor->held.load(std::memory_order_acquire)) spin.once();
  }

  // Rare ABA window: the tail we saw free may be recycled and re-enqueued (held) before our CAS.
  // The CAS then still enqueues us behind it, so we must wait like lock() — correct, but briefly
  // blocking.
  bool try_lock(Node*& node) {
    Node* tail = tail_.load(std::memory_order_acquire);
    if (tail->held.load(std::memory_order_acquire)) return false;
    node->held.store(true, std::memory_order_relaxed);
    if (!tail_.compare_exchange_strong(tail, node, std::memory_order_acq_rel,
                                       std::memory_order_relaxed)) {
      return false;
    }
    node->predecessor = tail;
    SpinWait spin;
    while (tail->held.load(std::memory_order_acquire)) spin.once();
    return true;
  }

  void unlock(Node*& node) {
    Node* predecessor = node->predecessor;
    node->held.store(false, std::memory_order_release);
    node = predecessor;  // our node now belongs to the successor; we recycle the predecessor's
  }

 private:
  alignas(kCacheLine) std::atomic<Node*> tail_;
};

static_assert(QueueLock<ClhLock>);

}  // namespace lockscope::lab
