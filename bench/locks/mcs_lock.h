// MCS queue lock (Mellor-Crummey & Scott, 1991): waiters form a linked queue, each spinning on a
// flag in its own node.
//
// Strictly FIFO-fair, never parks. A release touches only the successor's line, so traffic stays
// constant however many wait. Like every fair spinlock it convoys when the next waiter is
// preempted; and each acquisition needs a node (see queue_lock_adapter.h) — do not use it for
// oversubscribed thread pools.
#pragma once

#include <atomic>
#include <string_view>

#include "bench/locks/lock_concept.h"

namespace lockscope::lab {

class McsLock {
 public:
  static constexpr std::string_view kName = "mcs";

  struct alignas(kCacheLine) Node {
    std::atomic<Node*> next{nullptr};
    std::atomic<bool> waiting{false};
  };

  McsLock() = default;
  McsLock(const McsLock&) = delete;
  McsLock& operator=(const McsLock&) = delete;

  void lock(Node*& node) {
    node->next.store(nullptr, std::memory_order_relaxed);
    node->waiting.store(true, std::memory_order_relaxed);
    // acq_rel: acquire pairs with the release of a predecessor that left the queue empty.
    Node* predecessor = tail_.exchange(node, std::memory_order_acq_rel);
    if (predecessor == nullptr) return;
    predecessor->next.store(node, std::memory_order_release);
    SpinWait spin;
    while (node->waiting.load(std::memory_order_acquire)) spin.once();
  }

  bool try_lock(Node*& node) {
    node->next.store(nullptr, std::memory_order_relaxed);
    Node* expected = nullptr;
    return tail_.compare_exchange_strong(expected, node, std::memory_order_acq_rel,
                                         std::memory_order_relaxed);
  }

  void unlock(Node*& node) {
    Node* successor = node->next.load(std::memory_order_acquire);
    if (successor == nullptr) {
      Node* expected = node;
      if (tail_.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel,
                                        std::memory_order_relaxed)) {
        return;  // nobody queued behind us
      }
      // A successor swapped itself in but has not linked yet: wait for the link.
      SpinWait spin;
      while ((successor = node->next.load(std::memory_order_acquire)) == nullptr) spin.once();
    }
    successor->waiting.store(false, std::memory_order_release);
  }

 private:
  alignas(kCacheLine) std::atomic<Node*> tail_{nullptr};
};

static_assert(QueueLock<McsLock>);

}  // namespace lockscope::lab
