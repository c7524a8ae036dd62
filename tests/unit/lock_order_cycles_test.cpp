#include "analysis/lock_order_cycles.h"

#include <gtest/gtest.h>

namespace lockscope {
namespace {

ProcessProfile with_edges(size_t locks, const std::vector<std::pair<size_t, size_t>>& edges) {
  ProcessProfile process;
  process.locks.resize(locks);
  for (auto [from, to] : edges) {
    LockOrderEdge edge;
    edge.from_lock = from;
    edge.to_lock = to;
    process.lock_order.push_back(edge);
  }
  return process;
}

TEST(LockOrderCycles, AChainOrATreeHasNone) {
  EXPECT_TRUE(find_lock_order_inversions(with_edges(4, {{0, 1}, {1, 2}, {0, 2}, {2, 3}})).empty());
  EXPECT_TRUE(find_lock_order_inversions(with_edges(2, {})).empty());
}

TEST(LockOrderCycles, EachPairTakenBothWaysIsOneInversion) {
  // 0<->1 and 1<->2 (one component, two pairs); 3->4 alone.
  const ProcessProfile process = with_edges(5, {{1, 0}, {0, 1}, {1, 2}, {2, 1}, {3, 4}});
  const auto inversions = find_lock_order_inversions(process);
  ASSERT_EQ(inversions.size(), 2u);
  EXPECT_EQ(inversions[0].edges, (std::vector<size_t>{1, 0}));  // 0->1 first, then 1->0
  EXPECT_EQ(inversions[1].edges, (std::vector<size_t>{2, 3}));
}

TEST(LockOrderCycles, ALongerCycleIsReportedOnceAsAShortestOne) {
  // 0->1->2->0 and a longer way round 0->3->4->2.
  const ProcessProfile process = with_edges(5, {{0, 1}, {1, 2}, {2, 0}, {0, 3}, {3, 4}, {4, 2}});
  const auto inversions = find_lock_order_inversions(process);
  ASSERT_EQ(inversions.size(), 1u);
  EXPECT_EQ(inversions[0].edges, (std::vector<size_t>{0, 1, 2}));
}

TEST(LockOrderCycles, ADuplicateEdgeOrASelfEdgeChangesNothing) {
  const ProcessProfile process = with_edges(2, {{0, 1}, {0, 1}, {1, 1}, {1, 0}});
  const auto inversions = find_lock_order_inversions(process);
  ASSERT_EQ(inversions.size(), 1u);
  EXPECT_EQ(inversions[0].edges, (std::vector<size_t>{0, 3}));
}

// glibc's rwlocks prefer readers: a read lock never waits for readers, so a cycle of read locks
// held and read locks taken is no deadlock, nor one where only one of the two acquisitions can
// wait; with both able to wait (each lock held for writing) it is one.
TEST(LockOrderCycles, ReadLocksHeldAndTakenBothWaysAreNoInversion) {
  using format::Operation;
  ProcessProfile process = with_edges(2, {{0, 1}, {1, 0}});
  for (LockOrderEdge& edge : process.lock_order) {
    edge.from_operation = Operation::kReadLock;
    edge.to_operation = Operation::kReadLock;
  }
  EXPECT_TRUE(find_lock_order_inversions(process).empty());
  process.lock_order[1].from_operation = Operation::kWriteLock;  // 0->1 can now wait, 1->0 not
  EXPECT_TRUE(find_lock_order_inversions(process).empty());
  process.lock_order[0].from_operation = Operation::kWriteLock;  // and 1->0 can too
  EXPECT_EQ(find_lock_order_inversions(process).size(), 1u);
}

}  // namespace
}  // namespace lockscope
