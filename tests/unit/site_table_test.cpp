// The runtime's per-thread site table (src/runtime/site_table.*, compiled into this test): the
// chain of a lock's entries that find_or_insert_via_lock walks must find exactly what the hash
// index finds, across lock generations, and end even from a head left stale by clear_for_reuse.
#include "runtime/site_table.h"

#include <gtest/gtest.h>

#include <set>

namespace lockscope::runtime {
namespace {

SiteKey key_of(uint32_t lock, uint32_t generation, uintptr_t site, uint16_t op = 1) {
  return SiteKey{lock, generation, site, op};
}

TEST(SiteTable, TheChainOfALockFindsEachOfItsSites) {
  SiteTable table;
  std::set<SiteStats*> entries;
  for (uint32_t lock = 0; lock < 50; ++lock)
    for (uintptr_t site = 1; site <= 6; ++site)
      entries.insert(table.find_or_insert_via_lock(key_of(lock, 0, site * 16)));
  EXPECT_EQ(entries.size(), 300u);
  EXPECT_EQ(table.used(), 300u);
  for (uint32_t lock = 0; lock < 50; ++lock)
    for (uintptr_t site = 1; site <= 6; ++site) {
      const SiteKey key = key_of(lock, 0, site * 16);
      SiteStats* via_lock = table.find_or_insert_via_lock(key);
      ASSERT_NE(via_lock, nullptr);
      EXPECT_EQ(via_lock->key, key);
      EXPECT_EQ(via_lock, table.find_or_insert(key));
    }
  EXPECT_EQ(table.used(), 300u) << "nothing inserted twice";
}

TEST(SiteTable, ANewGenerationGetsItsOwnEntriesAndTheOldOnesStayFound) {
  SiteTable table;
  SiteStats* first = table.find_or_insert_via_lock(key_of(7, 1, 0x100));
  SiteStats* second = table.find_or_insert_via_lock(key_of(7, 2, 0x100));
  SiteStats* second_other_site = table.find_or_insert_via_lock(key_of(7, 2, 0x200));
  EXPECT_NE(first, second);
  EXPECT_NE(second, second_other_site);
  EXPECT_EQ(table.find_or_insert_via_lock(key_of(7, 2, 0x100)), second);
  EXPECT_EQ(table.find_or_insert_via_lock(key_of(7, 1, 0x100)), first) << "found in the index";
  EXPECT_EQ(table.used(), 3u);
}

// A reused thread's table keeps its lock-slot heads: they may name entries that are now other
// keys', even the very entry being inserted (before the fix this looped forever).
TEST(SiteTable, AStaleHeadAfterClearForReuseIsOnlyAMiss) {
  SiteTable table;
  for (uintptr_t site = 1; site <= 5; ++site) table.find_or_insert_via_lock(key_of(3, 0, site));
  table.find_or_insert_via_lock(key_of(9, 0, 1));
  table.clear_for_reuse();
  ASSERT_EQ(table.used(), 0u);
  std::set<SiteStats*> entries;
  // Lock 3 takes entries 1..5, so lock 9's first new entry is number 6: its stale head.
  for (int round = 0; round < 2; ++round)
    for (uintptr_t site = 10; site <= 14; ++site) {
      SiteStats* entry = table.find_or_insert_via_lock(key_of(3, 0, site));
      ASSERT_NE(entry, nullptr);
      EXPECT_EQ(entry->key, key_of(3, 0, site));
      entries.insert(entry);
    }
  for (uintptr_t site = 10; site <= 16; ++site) {
    SiteStats* entry = table.find_or_insert_via_lock(key_of(9, 0, site));
    ASSERT_NE(entry, nullptr);
    EXPECT_EQ(entry->key, key_of(9, 0, site));
    entries.insert(entry);
  }
  EXPECT_EQ(entries.size(), 12u);
  EXPECT_EQ(table.used(), 12u);
}

}  // namespace
}  // namespace lockscope::runtime
