#include "runtime/stack_store.h"

#include <gtest/gtest.h>

#include <vector>

#include "runtime/site_table.h"

namespace lockscope::runtime {
namespace {

TEST(StackStore, EachDistinctStackIsKeptOnceNumberedFromOne) {
  StackStore store;
  const uintptr_t a[] = {0x10, 0x20, 0x30};
  const uintptr_t b[] = {0x10, 0x20};
  EXPECT_EQ(store.intern(a, 3), 1u);
  EXPECT_EQ(store.intern(b, 2), 2u);
  EXPECT_EQ(store.intern(a, 3), 1u);
  EXPECT_EQ(store.intern(a, 0), 0u) << "an empty stack is none";
  ASSERT_EQ(store.size(), 2u);
  EXPECT_EQ(store.depth(1), 3u);
  EXPECT_EQ(store.frame(1, 2), 0x30u);
  uintptr_t out[StackStore::kMaxDepth];
  EXPECT_EQ(store.copy(2, out), 2u);
  EXPECT_EQ(out[1], 0x20u);
}

TEST(StackStore, ThousandsOfStacksGrowTheIndexAndKeepTheirNumbers) {
  StackStore store;
  for (uintptr_t i = 0; i < 20000; ++i) {
    const uintptr_t frames[] = {0x1000 + i, 0x2000, i * 7};
    ASSERT_EQ(store.intern(frames, 3), i + 1);
  }
  for (uintptr_t i = 0; i < 20000; i += 997) {
    const uintptr_t frames[] = {0x1000 + i, 0x2000, i * 7};
    EXPECT_EQ(store.intern(frames, 3), i + 1);
  }
  EXPECT_EQ(store.size(), 20000u);
}

// A merge re-numbers the other table's stacks in its own store, and sums rows of one stack.
TEST(StackStore, SiteTablesMergeTheirStackRowsByStack) {
  SiteTable one, two, all;
  const SiteKey key{3, 0, 0x400, 1};
  const uintptr_t first[] = {0x400, 0x500};
  const uintptr_t second[] = {0x400, 0x600};
  SiteDetail* d1 = one.detail(*one.find_or_insert(key));
  ASSERT_TRUE(one.record_stack(d1->stacks, second, 2, 1, 100));
  ASSERT_TRUE(one.record_stack(d1->stacks, first, 2, 1, 50));
  SiteDetail* d2 = two.detail(*two.find_or_insert(key));
  ASSERT_TRUE(two.record_stack(d2->stacks, first, 2, 2, 30));
  EXPECT_EQ(all.merge_from(two), 0u);
  EXPECT_EQ(all.merge_from(one), 0u);
  const SiteDetail* merged = all.detail(*all.find_or_insert(key));
  std::vector<std::pair<uintptr_t, uint64_t>> rows;  // (second frame, wait)
  for (const StackRow* row = merged->stacks; row; row = row->next)
    rows.push_back({all.stacks().frame(row->stack, 1), row->wait_ns});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (std::pair<uintptr_t, uint64_t>{0x500, 80}));
  EXPECT_EQ(rows[1], (std::pair<uintptr_t, uint64_t>{0x600, 100}));
  EXPECT_EQ(all.stacks().size(), 2u);
}

}  // namespace
}  // namespace lockscope::runtime
