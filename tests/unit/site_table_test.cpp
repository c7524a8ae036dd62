// The runtime's per-thread site table (src/runtime/site_table.*, compiled into this test): the
// chain of a lock's entries that find_or_insert_via_lock walks (a thread's table has no hash
// index) finds each key's one entry, across lock generations, and ends even from a head left
// stale by clear_for_reuse; a site that only times holds has the short detail, which keeps its
// holds when it grows whole and when tables merge; a detail starts a cache line and holds its first
// histogram bins itself; a small table keeps its memory for the next thread of its slot, stacks and
// all; owner changes counted in an entry add up through carries and merges.
#include "runtime/site_table.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

namespace lockscope::runtime {
namespace {

SiteKey key_of(uint32_t lock, uint32_t generation, uintptr_t site, uint16_t op = 1) {
  return SiteKey{lock, generation, site, op};
}

// A table's entry for (lock 1, site 16) and its whole detail (nullptr when memory was refused).
std::pair<SiteStats*, SiteDetail*> site_with_detail(SiteTable& table) {
  SiteStats* site = table.find_or_insert(key_of(1, 0, 16));
  return {site, site ? table.detail(*site) : nullptr};
}

// The holds a detail's hold histogram counts.
uint64_t holds_binned(const SiteDetail* detail) {
  uint64_t binned = 0;
  for_each_bin(detail->hold_histogram, [&](int, uint64_t count) { binned += count; });
  return binned;
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
  EXPECT_EQ(table.find_or_insert_via_lock(key_of(7, 1, 0x100)), first)
      << "found past the newer generation's entries";
  EXPECT_EQ(table.used(), 3u);
}

// A lock re-created at one address many times (a mutex on the stack of a loop) has entries of each
// generation in its chain, the newest first: each generation's lookups find its own.
TEST(SiteTable, EachGenerationOfALockReCreatedAtOneAddressKeepsItsOwnEntries) {
  SiteTable table;
  for (uint32_t generation = 1; generation <= 1000; ++generation) {
    SiteStats* acquire = table.find_or_insert_via_lock(key_of(4, generation, 0x100));
    SiteStats* release = table.find_or_insert_via_lock(key_of(4, generation, 0x200, 2));
    ASSERT_NE(acquire, nullptr);
    ASSERT_NE(release, nullptr);
    ASSERT_NE(acquire, release);
    ASSERT_EQ(table.find_or_insert_via_lock(key_of(4, generation, 0x100)), acquire);
  }
  EXPECT_EQ(table.used(), 2000u);
  EXPECT_EQ(table.find_or_insert_via_lock(key_of(4, 1, 0x200, 2))->key, key_of(4, 1, 0x200, 2));
  EXPECT_EQ(table.used(), 2000u);
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

// A short-lived thread that timed a hold captured its stack; its slot's next thread must not pay a
// mapping and unmapping of the table's memory for it (10,000 short-lived threads made 25,000
// munmap calls, each a TLB shootdown of the other CPUs, more than the threads cost themselves).
TEST(SiteTable, ASmallTableWithStacksKeepsItsMemoryForTheNextThread) {
  SiteTable table;
  SiteStats* entry = table.find_or_insert(key_of(1, 0, 16));
  ASSERT_NE(entry, nullptr);
  ++entry->count;
  SiteDetail* detail = table.detail(*entry);
  ASSERT_NE(detail, nullptr);
  const uintptr_t frames[] = {0x1000, 0x2000, 0x3000};
  ASSERT_EQ(table.record_stack(detail->hold_stacks, frames, 3, 1, 500), 1u);
  table.clear_for_reuse();
  EXPECT_EQ(table.used(), 0u);
  EXPECT_EQ(table.stacks().size(), 0u);
  // Had the table given its chunk back, a mapping of that size would now take its place.
  void* blocker = mmap(nullptr, 64 * sizeof(SiteStats), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(blocker, MAP_FAILED);
  SiteStats* again = table.find_or_insert(key_of(7, 0, 32));
  EXPECT_EQ(again, entry) << "the first chunk was unmapped and mapped again";
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->count, 0u);
  EXPECT_EQ(again->detail, nullptr) << "zeroed in place";
  const uintptr_t other[] = {0x4000, 0x5000};
  EXPECT_EQ(table.intern_stack(other, 2), 1u) << "stacks numbered from 1 again";
  EXPECT_EQ(table.intern_stack(frames, 3), 2u) << "the old stack is gone";
  uintptr_t copied[StackStore::kMaxDepth];
  ASSERT_EQ(table.stacks().copy(1, copied), 2u);
  EXPECT_EQ(copied[0], 0x4000u);
  EXPECT_EQ(copied[1], 0x5000u);
  munmap(blocker, 64 * sizeof(SiteStats));
  table.reset();
}

TEST(SiteTable, AShortDetailKeepsItsHoldsWhenItGrowsWholeAndWhenMerged) {
  SiteTable table;
  SiteStats* cold = table.find_or_insert(key_of(1, 0, 16));
  SiteStats* waited = table.find_or_insert(key_of(2, 0, 16));
  ASSERT_NE(cold, nullptr);
  ASSERT_NE(waited, nullptr);
  SiteDetail* short_form = table.hold_detail(*cold);
  ASSERT_NE(short_form, nullptr);
  EXPECT_EQ(short_form->full, 0u);
  for (uint64_t ns : {1000, 2000, 400000}) ASSERT_TRUE(table.record_hold(*short_form, ns, 1));
  EXPECT_EQ(table.hold_detail(*cold), short_form) << "the short form serves holds";
  // The other site waited too: whole from the start, then timed.
  SiteDetail* whole = table.detail(*waited);
  ASSERT_NE(whole, nullptr);
  EXPECT_EQ(whole->full, 1u);
  ++whole->contended;
  ASSERT_TRUE(table.record_hold(*whole, 5000, 32));

  // Merged into another table: the short one stays short, the whole one whole.
  SiteTable merged;
  EXPECT_EQ(merged.merge_from(table), 0u);
  SiteStats* merged_cold = merged.find_or_insert(key_of(1, 0, 16));
  ASSERT_NE(merged_cold->detail, nullptr);
  EXPECT_EQ(merged_cold->detail->full, 0u);
  EXPECT_EQ(merged_cold->detail->hold_sum_ns, 403000u);
  SiteStats* merged_waited = merged.find_or_insert(key_of(2, 0, 16));
  EXPECT_EQ(merged_waited->detail->full, 1u);
  EXPECT_EQ(merged_waited->detail->contended, 1u);
  EXPECT_EQ(merged_waited->detail->hold_sampled_count, 1u);

  // Grown whole (a wait at that site): the holds go with it, the histogram too.
  SiteDetail* grown = table.detail(*cold);
  ASSERT_NE(grown, nullptr);
  EXPECT_NE(grown, short_form);
  EXPECT_EQ(grown->full, 1u);
  EXPECT_EQ(cold->detail, grown);
  EXPECT_EQ(grown->hold_sum_ns, 403000u);
  EXPECT_EQ(grown->hold_exact_count, 3u);
  EXPECT_EQ(grown->hold_max_ns, 400000u);
  EXPECT_EQ(grown->contended, 0u);
  EXPECT_EQ(holds_binned(grown), 3u);
  // A short one merged into a whole one adds its holds, and a whole one into a short one grows it.
  EXPECT_EQ(merged.merge_from(table), 0u);
  EXPECT_EQ(merged_cold->detail->full, 1u);
  EXPECT_EQ(merged_cold->detail->hold_sum_ns, 2 * 403000u);
  EXPECT_EQ(merged_cold->detail->hold_exact_count, 6u);
  table.reset();
  merged.reset();
}

// Exact holds deferred (SiteTable::defer_exact_hold) end up as if recorded one by one: a batch
// is written into the details when the list fills, and the holds still pending are in every merge
// of the table, each once.
TEST(SiteTable, DeferredExactHoldsAreInTheDetailsAndInEveryMergeOnce) {
  SiteTable table;
  SiteTable expected;
  std::vector<SiteStats*> sites;
  for (uint32_t lock = 1; lock <= 10; ++lock)
    sites.push_back(table.find_or_insert(key_of(lock, 0, 16)));
  // 150 holds over 10 sites: two batches written, 22 still pending.
  const uint32_t holds = 2 * SiteTable::kPendingHolds + 22;
  for (uint32_t i = 0; i < holds; ++i) {
    const uint64_t ns = 100 + uint64_t{i} * i * 37;
    SiteStats* site = sites[i % sites.size()];
    ASSERT_NE(site, nullptr);
    ++site->count;
    ASSERT_EQ(table.defer_exact_hold(*site, ns), 0u);
    SiteStats* same = expected.find_or_insert(site->key);
    ++same->count;
    ASSERT_TRUE(expected.record_hold(*expected.hold_detail(*same), ns, 1));
  }
  uint64_t written = 0;
  for (SiteStats* site : sites)
    if (site->detail) written += site->detail->hold_exact_count;
  EXPECT_EQ(written, 2u * SiteTable::kPendingHolds) << "the full batches are in the details";

  // Merged twice (two snapshots): each merge has every hold once.
  for (int merge = 0; merge < 2; ++merge) {
    SiteTable merged;
    EXPECT_EQ(merged.merge_from(table), 0u);
    for (SiteStats* site : sites) {
      const SiteDetail* got = merged.find_or_insert(site->key)->detail;
      const SiteDetail* want = expected.find_or_insert(site->key)->detail;
      ASSERT_NE(got, nullptr);
      EXPECT_EQ(got->hold_exact_count, want->hold_exact_count);
      EXPECT_EQ(got->hold_sum_ns, want->hold_sum_ns);
      EXPECT_EQ(got->hold_max_ns, want->hold_max_ns);
      std::vector<std::pair<int, uint64_t>> got_bins, want_bins;
      for_each_bin(got->hold_histogram, [&](int b, uint64_t n) { got_bins.emplace_back(b, n); });
      for_each_bin(want->hold_histogram, [&](int b, uint64_t n) { want_bins.emplace_back(b, n); });
      std::sort(got_bins.begin(), got_bins.end());
      std::sort(want_bins.begin(), want_bins.end());
      EXPECT_EQ(got_bins, want_bins);
    }
    merged.reset();
  }
  // Emptied for another thread: nothing of it is pending any more.
  table.clear_for_reuse();
  SiteTable after;
  EXPECT_EQ(after.merge_from(table), 0u);
  EXPECT_EQ(after.used(), 0u);
  table.reset();
  expected.reset();
  after.reset();
}

// A detail starts a cache line, its hold histogram the block inside it: an exact hold and an owner
// change write that line alone. Holds in more buckets than it has room for move the histogram to
// a block of its own, and a detail grown whole takes its histogram along, inline or not.
TEST(SiteTable, ADetailsFirstHistogramIsInsideItAndGrowsOutOfIt) {
  SiteTable table;
  SiteStats* one = table.find_or_insert(key_of(1, 0, 16));
  SiteStats* many = table.find_or_insert(key_of(2, 0, 16));
  SiteDetail* small = table.hold_detail(*one);
  SiteDetail* large = table.hold_detail(*many);
  ASSERT_NE(small, nullptr);
  ASSERT_NE(large, nullptr);
  for (const SiteDetail* detail : {small, large}) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(detail) % 64, 0u);
    EXPECT_EQ(detail->hold_histogram, &detail->inline_hold);
  }
  const auto bins = [](const SiteDetail* detail) {
    std::vector<std::pair<int, uint64_t>> seen;
    for_each_bin(detail->hold_histogram,
                 [&](int bucket, uint64_t n) { seen.emplace_back(bucket, n); });
    return seen;
  };
  ASSERT_TRUE(table.record_hold(*small, 1000, 1));
  ASSERT_TRUE(table.record_hold(*small, 1000, 1));
  ++small->owner_changes;
  EXPECT_EQ(small->hold_histogram, &small->inline_hold);
  const int bucket = LogHistogramLayout::bucket_of(1000);
  EXPECT_EQ(bins(small), (std::vector<std::pair<int, uint64_t>>{{bucket, 2}}));
  // Grown whole: the copy's own inline block, with the bins.
  SiteDetail* small_whole = table.detail(*one);
  ASSERT_NE(small_whole, small);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small_whole) % 64, 0u);
  EXPECT_EQ(small_whole->hold_histogram, &small_whole->inline_hold);
  ASSERT_TRUE(table.record_hold(*small_whole, 1000, 1));
  EXPECT_EQ(bins(small_whole), (std::vector<std::pair<int, uint64_t>>{{bucket, 3}}));
  EXPECT_EQ(small_whole->owner_changes, 1u);

  // Twelve buckets: out of the inline block, every hold kept.
  std::vector<std::pair<int, uint64_t>> expected;
  for (uint64_t ns = 100; expected.size() < 12; ns *= 3) {
    ASSERT_TRUE(table.record_hold(*large, ns, 1));
    const int b = LogHistogramLayout::bucket_of(ns);
    if (expected.empty() || expected.back().first != b) expected.emplace_back(b, 0);
    ++expected.back().second;
  }
  EXPECT_GT(expected.size(), kInlineHoldBins);
  EXPECT_NE(large->hold_histogram, &large->inline_hold);
  EXPECT_EQ(bins(large), expected);
  SiteDetail* large_whole = table.detail(*many);
  EXPECT_EQ(large_whole->hold_histogram, large->hold_histogram);
  EXPECT_EQ(bins(large_whole), expected);
  // Merged: the same bins in the other table.
  SiteTable merged;
  EXPECT_EQ(merged.merge_from(table), 0u);
  EXPECT_EQ(bins(merged.find_or_insert(key_of(2, 0, 16))->detail), expected);
  EXPECT_EQ(bins(merged.find_or_insert(key_of(1, 0, 16))->detail),
            (std::vector<std::pair<int, uint64_t>>{{bucket, 3}}));
  table.reset();
  merged.reset();
}

// A sample's hold-stack row stands for the acquisitions after it: a table merged before they
// came holds only those that did (the entry's countdown taken out of the row, its count and its
// time at the sample's length), and a sample still held gives them back, as its bucket does.
TEST(SiteTable, AMergeTakesTheLastSamplesPendingHoldsOutOfItsStackRow) {
  SiteTable table;
  const auto [site, detail] = site_with_detail(table);
  ASSERT_NE(detail, nullptr);
  const uintptr_t other_frames[] = {0x1000, 0x2000};
  const uintptr_t frames[] = {0x1010, 0x2000, 0x3000};
  ASSERT_NE(table.record_stack(detail->hold_stacks, other_frames, 2, 1, 50), 0u);  // an exact one
  ASSERT_TRUE(table.record_hold(*detail, 100, 8));  // the sample, standing for 8
  const uint32_t stack = table.record_stack(detail->hold_stacks, frames, 3, 8, 800);
  ASSERT_NE(stack, 0u);
  detail->last_sample_stack = stack;
  detail->last_sample_ns = 100;
  site->count = 4;  // the sample and 3 acquisitions after it: 5 still to come
  site->hold_countdown = 5;
  const auto rows = [](const SiteStats* merged_site) {
    std::vector<std::pair<uint64_t, uint64_t>> seen;
    for (const StackRow* row = merged_site->detail->hold_stacks; row; row = row->next)
      seen.emplace_back(row->waits, row->wait_ns);
    return seen;
  };
  SiteTable merged;
  EXPECT_EQ(merged.merge_from(table), 0u);
  const SiteStats* merged_site = merged.find_or_insert(key_of(1, 0, 16));
  EXPECT_EQ(rows(merged_site), (std::vector<std::pair<uint64_t, uint64_t>>{{1, 50}, {3, 300}}));
  EXPECT_EQ(holds_binned(merged_site->detail), 3u);
  // The same table while its thread still holds a sample (the countdown is that sample's).
  SiteTable snapshot;
  const SiteStats* const held_samples[] = {site};
  EXPECT_EQ(snapshot.merge_from(table, held_samples, 1), 0u);
  const SiteStats* snapshot_site = snapshot.find_or_insert(key_of(1, 0, 16));
  EXPECT_EQ(rows(snapshot_site), (std::vector<std::pair<uint64_t, uint64_t>>{{1, 50}, {8, 800}}));
  // While its thread holds one of the holds the sample stands for: that one leaves it too.
  SiteTable unended;
  EXPECT_EQ(unended.merge_from(table), 0u);
  unended.take_unended_hold(table, *site);
  const SiteStats* unended_site = unended.find_or_insert(key_of(1, 0, 16));
  EXPECT_EQ(rows(unended_site), (std::vector<std::pair<uint64_t, uint64_t>>{{1, 50}, {2, 200}}));
  EXPECT_EQ(holds_binned(unended_site->detail), 2u);
  table.reset();
  merged.reset();
  snapshot.reset();
  unended.reset();
}

// Sampling gaps are random: a sample still held may wait for more acquisitions than the latest
// recorded sample stands for. Its countdown is left alone, not taken out of that sample's bucket
// and given back (the bucket, emptied at 2 and given back 6, held 6: 10 holds of 8).
TEST(SiteTable, AHeldSamplesLongerGapLeavesThePreviousSamplesBucketAlone) {
  SiteTable table;
  const auto [site, detail] = site_with_detail(table);
  ASSERT_NE(detail, nullptr);
  ASSERT_TRUE(table.record_hold(*detail, 10, 1));   // an exact hold
  ASSERT_TRUE(table.record_hold(*detail, 100, 2));  // a sample standing for 2
  site->count = 4;           // the exact one, the sample, the one after it, and a sample still held
  site->hold_countdown = 6;  // that held sample's gap of 7
  SiteTable merged;
  const SiteStats* const held_samples[] = {site};
  EXPECT_EQ(merged.merge_from(table, held_samples, 1), 0u);
  EXPECT_EQ(holds_binned(merged.find_or_insert(key_of(1, 0, 16))->detail), 3u)
      << "the 3 holds that ended";
  table.reset();
  merged.reset();
}

// Owner changes are counted in the entry's own 32-bit field (the line the acquisition writes
// anyway); each wrap carries 2^32 into the detail, and a merged table keeps them all in its
// details, from entries with or without one.
TEST(SiteTable, OwnerChangesCountedInTheEntryAddUpThroughCarriesAndMerges) {
  SiteTable table;
  SiteStats* plain = table.find_or_insert_via_lock(key_of(1, 0, 16));
  SiteStats* wrapped = table.find_or_insert_via_lock(key_of(2, 0, 16));
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(wrapped, nullptr);
  plain->owner_changes = 7;  // no detail
  EXPECT_EQ(owner_changes_of(*plain), 7u);
  wrapped->owner_changes = 0xFFFFFFFFu;
  ++wrapped->owner_changes;  // as count_owner_change does: it wrapped, so it carries
  ASSERT_TRUE(table.carry_owner_changes(*wrapped));
  ++wrapped->owner_changes;
  ASSERT_NE(wrapped->detail, nullptr);
  EXPECT_EQ(owner_changes_of(*wrapped), (uint64_t{1} << 32) + 1);

  SiteTable merged;
  for (int round = 0; round < 3; ++round) EXPECT_EQ(merged.merge_from(table), 0u);
  SiteStats* merged_plain = merged.find_or_insert(key_of(1, 0, 16));
  SiteStats* merged_wrapped = merged.find_or_insert(key_of(2, 0, 16));
  EXPECT_EQ(merged_plain->owner_changes, 0u) << "a merged table's are in its details";
  EXPECT_EQ(owner_changes_of(*merged_plain), 21u);
  EXPECT_EQ(owner_changes_of(*merged_wrapped), 3 * ((uint64_t{1} << 32) + 1));
}

}  // namespace
}  // namespace lockscope::runtime
