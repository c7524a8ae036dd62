// Type-stable memory for queue-lock nodes: a node, once allocated, stays a node for the life of the
// process; "freeing" returns it to this pool.
//
// Why: CLH's try_lock reads the `held` flag of the current tail node without owning it. Meanwhile
// that node can migrate to another thread, which may exit. If exit deleted the node, the read would
// be a use-after-free (TSan found exactly this). With type-stable nodes the read sees some node's
// flag, and the ABA case is handled in try_lock itself. Nodes stay reachable from the pool, so leak
// checkers are quiet; the pool only grows to the peak number of threads + locks alive at once.
#pragma once

#include <mutex>
#include <vector>

namespace lockscope::lab {

template <class Node>
class NodePool {
 public:
  static Node* take() {
    Shared& shared = instance();
    std::lock_guard<std::mutex> guard(shared.mutex);
    if (shared.free_nodes.empty()) {
      shared.all_nodes.push_back(new Node);
      return shared.all_nodes.back();
    }
    Node* node = shared.free_nodes.back();
    shared.free_nodes.pop_back();
    return node;
  }
  static void give_back(Node* node) {
    Shared& shared = instance();
    std::lock_guard<std::mutex> guard(shared.mutex);
    shared.free_nodes.push_back(node);
  }

 private:
  struct Shared {
    std::mutex mutex;
    std::vector<Node*> free_nodes;
    std::vector<Node*> all_nodes;  // never freed (see above); keeps them reachable
  };
  // Leaked on purpose: thread-exit destructors may run after static destruction has begun.
  static Shared& instance() {
    static Shared* shared = new Shared;
    return *shared;
  }
};

}  // namespace lockscope::lab
