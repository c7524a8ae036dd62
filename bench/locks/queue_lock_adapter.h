// WithThreadLocalNode<Q>: turns a queue lock (explicit node per waiter) into a plain Lockable.
//
// Each thread keeps a small stack of nodes per queue-lock type; lock() takes the next one, unlock()
// returns the top one. So locks of one type must be released in LIFO order by a thread (true of
// every scoped guard), and a thread may hold at most kMaxNestedNodes of them at once. Nodes return
// to NodePool when the thread exits; a CLH lock's own node returns with the lock.
#pragma once

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "bench/locks/lock_concept.h"
#include "bench/locks/node_pool.h"

namespace lockscope::lab {

template <class Node>
class ThreadNodeStack {
 public:
  static constexpr int kMaxNestedNodes = 8;

  ThreadNodeStack() = default;
  ThreadNodeStack(const ThreadNodeStack&) = delete;
  ThreadNodeStack& operator=(const ThreadNodeStack&) = delete;
  ~ThreadNodeStack() {
    for (Node* node : nodes_) {
      if (node != nullptr) NodePool<Node>::give_back(node);
    }
  }

  Node*& push() {
    if (depth_ == kMaxNestedNodes) fail("too many nested queue locks held by one thread");
    Node*& slot = nodes_[static_cast<std::size_t>(depth_++)];
    if (slot == nullptr) slot = NodePool<Node>::take();
    return slot;
  }
  Node*& top() {
    if (depth_ == 0) fail("unlock of a queue lock this thread does not hold");
    return nodes_[static_cast<std::size_t>(depth_ - 1)];
  }
  void pop() { --depth_; }

  static ThreadNodeStack& for_this_thread() {
    static thread_local ThreadNodeStack stack;
    return stack;
  }

 private:
  [[noreturn]] static void fail(const char* why) {
    std::fprintf(stderr, "lockscope: bench: %s\n", why);
    std::abort();
  }

  std::array<Node*, kMaxNestedNodes> nodes_{};
  int depth_ = 0;
};

template <QueueLock Q>
class WithThreadLocalNode {
 public:
  static constexpr std::string_view kName = Q::kName;
  using Nodes = ThreadNodeStack<typename Q::Node>;

  WithThreadLocalNode() = default;
  WithThreadLocalNode(const WithThreadLocalNode&) = delete;
  WithThreadLocalNode& operator=(const WithThreadLocalNode&) = delete;

  void lock() { lock_.lock(Nodes::for_this_thread().push()); }
  bool try_lock() {
    Nodes& nodes = Nodes::for_this_thread();
    if (lock_.try_lock(nodes.push())) return true;
    nodes.pop();
    return false;
  }
  void unlock() {
    Nodes& nodes = Nodes::for_this_thread();
    lock_.unlock(nodes.top());
    nodes.pop();
  }

 private:
  Q lock_;
};

}  // namespace lockscope::lab
