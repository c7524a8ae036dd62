#include "analysis/lock_order_cycles.h"

#include <algorithm>
#include <deque>
#include <map>
#include <utility>

namespace lockscope {
namespace {

// Strongly connected components (Tarjan's algorithm, iterative: a chain of a million nested
// locks must not overflow the stack). component[v] is the component of lock v.
std::vector<size_t> components(size_t nodes, const std::vector<std::vector<size_t>>& next) {
  constexpr size_t kUnseen = static_cast<size_t>(-1);
  std::vector<size_t> index(nodes, kUnseen), low(nodes, 0), component(nodes, kUnseen);
  std::vector<bool> on_stack(nodes, false);
  std::vector<size_t> stack;
  std::vector<std::pair<size_t, size_t>> call;  // (node, next child position)
  size_t counter = 0, components_found = 0;
  for (size_t root = 0; root < nodes; ++root) {
    if (index[root] != kUnseen) continue;
    call.push_back({root, 0});
    while (!call.empty()) {
      auto& [v, child] = call.back();
      if (child == 0 && index[v] == kUnseen) {
        index[v] = low[v] = counter++;
        stack.push_back(v);
        on_stack[v] = true;
      }
      if (child < next[v].size()) {
        const size_t w = next[v][child++];
        if (index[w] == kUnseen)
          call.push_back({w, 0});
        else if (on_stack[w])
          low[v] = std::min(low[v], index[w]);
        continue;
      }
      if (low[v] == index[v]) {
        size_t w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = false;
          component[w] = components_found;
        } while (w != v);
        ++components_found;
      }
      const size_t finished = v;
      call.pop_back();
      if (!call.empty()) low[call.back().first] = std::min(low[call.back().first], low[finished]);
    }
  }
  return component;
}

// Whether taking a lock as `taken` can wait for a thread that holds it as `held`.
bool can_wait_for(format::Operation taken, format::Operation held) {
  return !(format::is_read_side(taken) && format::is_read_side(held));
}

// Each edge's acquisition can wait for the next edge's hold of the same lock.
bool can_deadlock(const ProcessProfile& process, const std::vector<size_t>& cycle) {
  for (size_t i = 0; i < cycle.size(); ++i) {
    const LockOrderEdge& edge = process.lock_order[cycle[i]];
    const LockOrderEdge& next = process.lock_order[cycle[(i + 1) % cycle.size()]];
    if (!can_wait_for(edge.to_operation, next.from_operation)) return false;
  }
  return true;
}

}  // namespace

std::vector<LockOrderInversion> find_lock_order_inversions(const ProcessProfile& process) {
  const size_t nodes = process.locks.size();
  std::vector<std::vector<size_t>> next(nodes);
  std::map<std::pair<size_t, size_t>, size_t> edge_of;  // (from, to) -> its first edge
  for (size_t e = 0; e < process.lock_order.size(); ++e) {
    const LockOrderEdge& edge = process.lock_order[e];
    if (edge.from_lock >= nodes || edge.to_lock >= nodes || edge.from_lock == edge.to_lock)
      continue;
    if (edge_of.emplace(std::pair{edge.from_lock, edge.to_lock}, e).second)
      next[edge.from_lock].push_back(edge.to_lock);
  }
  for (auto& targets : next) std::sort(targets.begin(), targets.end());
  const std::vector<size_t> component = components(nodes, next);

  std::vector<LockOrderInversion> out;
  std::map<size_t, bool> has_pair;  // component -> a pair of locks inside it is taken both ways
  for (const auto& [locks, e] : edge_of) {
    const auto [a, b] = locks;
    if (a > b) continue;
    auto back = edge_of.find({b, a});
    if (back == edge_of.end()) continue;
    has_pair[component[a]] = true;
    if (can_deadlock(process, {e, back->second}))
      out.push_back(LockOrderInversion{{e, back->second}});
  }
  // A longer cycle: from the lowest lock of each component without a pair, the shortest way back
  // to it (breadth-first, inside the component).
  std::map<size_t, size_t> lowest;  // component -> its lowest lock with an edge inside it
  for (const auto& [locks, e] : edge_of)
    if (component[locks.first] == component[locks.second] &&
        !has_pair.count(component[locks.first]))
      lowest.emplace(component[locks.first], locks.first);  // edge_of is ordered: first is lowest
  for (const auto& [c, start] : lowest) {
    std::map<size_t, size_t> parent;  // lock -> the lock it was reached from
    std::deque<size_t> queue{start};
    bool closed = false;
    size_t last = start;
    while (!queue.empty() && !closed) {
      const size_t v = queue.front();
      queue.pop_front();
      for (size_t w : next[v]) {
        if (component[w] != c) continue;
        if (w == start) {
          closed = true;
          last = v;
          break;
        }
        if (parent.emplace(w, v).second) queue.push_back(w);
      }
    }
    if (!closed) continue;
    std::vector<size_t> path{last};
    while (path.back() != start) path.push_back(parent.at(path.back()));
    std::reverse(path.begin(), path.end());  // start ... last
    LockOrderInversion inversion;
    for (size_t i = 0; i < path.size(); ++i)
      inversion.edges.push_back(edge_of.at({path[i], i + 1 < path.size() ? path[i + 1] : start}));
    if (can_deadlock(process, inversion.edges)) out.push_back(std::move(inversion));
  }
  std::sort(out.begin(), out.end(), [&](const LockOrderInversion& x, const LockOrderInversion& y) {
    const auto key = [&](const LockOrderInversion& v) {
      const LockOrderEdge& first = process.lock_order[v.edges.front()];
      return std::pair{first.from_lock, first.to_lock};
    };
    return key(x) < key(y);
  });
  return out;
}

}  // namespace lockscope
