// Per-(lock generation, call site, operation) statistics, aggregated at the source.
//
// Each thread records into its own SiteTable without locks or atomics; the process-wide table
// (sites of threads that are gone) is written under the runtime's merge lock. A table only grows:
// entries live in a ChunkedArray, so their addresses never change and the hot path may keep
// pointers to them. A thread's table finds its entries by lock (find_or_insert_via_lock); a merged
// table (the process's, the profile writer's) by a hash index of (tag, entry number), rebuilt at
// twice the size when half full. Only a first use of a (lock, site, operation) inserts, off the
// hot path. An entry is 64 bytes: what was never needed is never allocated — the detail block
// (waits, failures, timed holds, events) comes on first use, and each histogram is sparse, in
// blocks that double as buckets are touched. So a thread that touches 100,000 locks once costs a
// few MB, not hundreds, and no table ever fills.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/log_histogram.h"
#include "runtime/bump_arena.h"
#include "runtime/chunked_array.h"
#include "runtime/stack_store.h"

namespace lockscope::runtime {

using Histogram = uint64_t[LogHistogramLayout::kBuckets];

// The non-zero buckets of a latency histogram: `size` bins of `capacity`, each the bucket in the
// top 8 bits and the count in the low 56, in a block of the table's arena.
struct SparseHistogram {
  uint32_t capacity;
  uint32_t size;
  uint64_t* bins() { return reinterpret_cast<uint64_t*>(this + 1); }
  const uint64_t* bins() const { return reinterpret_cast<const uint64_t*>(this + 1); }
};
static_assert(LogHistogramLayout::kBuckets <= 256, "a bucket must fit the bin's top 8 bits");
inline constexpr uint64_t kBinCountMask = (uint64_t{1} << 56) - 1;

// Adds `weight` to `bucket`, allocating or enlarging the block; false when out of memory.
bool histogram_add(SparseHistogram*& histogram, BumpArena& arena, int bucket, uint64_t weight);
// Takes up to `weight` out of `bucket`.
void histogram_remove(SparseHistogram* histogram, int bucket, uint64_t weight);
template <typename Visit>
void for_each_bin(const SparseHistogram* histogram, Visit visit) {
  if (!histogram) return;
  for (uint32_t i = 0; i < histogram->size; ++i)
    visit(static_cast<int>(histogram->bins()[i] >> 56), histogram->bins()[i] & kBinCountMask);
}

struct SiteKey {
  uint32_t lock_slot;  // index in the LockTable
  uint32_t generation;
  uintptr_t site;      // return address of the interposed call
  uint16_t operation;  // format::Operation
  bool operator==(const SiteKey&) const = default;
};

// Who made a site's contended acquisitions wait: the acquire site of the hold they waited behind
// (0: not known), that hold's call stack at its release (a number in the process's
// HolderStackTable, 0: not captured), and the stack they waited from (a number in the table's
// StackStore, 0: not captured).
struct BlameKey {
  uintptr_t holder_site;
  uint32_t holder_stack;
  uint32_t waiter_stack;
  bool operator==(const BlameKey&) const = default;
};
// How often, and for how long: a list per site, in the table's arena.
struct BlameRow {
  BlameKey key;
  uint64_t waits;
  uint64_t wait_ns;
  BlameRow* next;
};

// A site's contended acquisitions by the call stack they waited from (a number in the table's
// StackStore). A list per site, in the table's arena.
struct StackRow {
  uint32_t stack;
  uint32_t reserved;
  uint64_t waits;
  uint64_t wait_ns;
  StackRow* next;
};

// Everything about a site but its count: allocated the first time any of it is needed. A site
// whose only need is timing its holds (a cold site that never waited: most of a server's item
// locks, each timed for its first holds) gets the short form, the fields up to `contended` (128
// bytes instead of 320); anything else it needs later gets it the whole (SiteTable::detail).
// 64-byte aligned, with what an exact hold and an owner change write in its first cache line: a
// server's cold holds, each at a site it has not seen for long, missed three lines each (the
// hold fields, the owner changes, a histogram block) where they now miss one.
struct alignas(64) SiteDetail {
  // Holds: the exact ones (a cold site's first N, contended ones) are summed as they are; the
  // sampled ones (1 in N after that) are kept raw, with their squares, so that the writer can
  // estimate the holds in between and bound the estimate's error (lock_section_writers.cpp).
  uint64_t hold_sum_ns;  // exact holds
  uint64_t hold_exact_count;
  uint64_t hold_max_ns;
  SparseHistogram* hold_histogram;  // a sampled hold counts `period` times; starts as `inline_hold`
  // Acquisitions here that took the lock from another thread (lock_owner.h) beyond the entry's own
  // 32-bit count (SiteStats::owner_changes): its carries, and all of a merged table's. A lock's
  // HANDOFFS are its sites' sum (owner_changes_of).
  uint64_t owner_changes;
  // The hold histogram's first block, its bins following it here (kInlineHoldBins of them: the
  // first two in the first line): a cold site's holds fall in a few buckets.
  SparseHistogram inline_hold;
  uint64_t inline_hold_bins[6];
  uint32_t full;  // 1: the fields from `contended` on are there too; 0: the short form
  // The hold histogram's bucket + 1 of the latest sampled hold (0: none yet). That sample counts
  // for itself and the acquisitions after it until the next (SiteStats::hold_countdown of them
  // are still to come): a table read before they come takes them out of its bucket
  // (SiteTable::merge_from), so that the histogram's holds add up to the site's acquisitions.
  uint32_t last_sample_bucket;
  uint64_t hold_sampled_ns;    // sampled holds, unscaled
  double hold_sampled_sq_ns2;  // their squares
  uint64_t hold_sampled_count;
  // (Holds timed: hold_exact_count + hold_sampled_count.)
  uint64_t contended;
  uint64_t failed;
  uint64_t wait_sum_ns;
  uint64_t wait_max_ns;
  uint64_t behind_readers;   // rwlock: waits begun while readers held it
  uint64_t behind_writer;    // rwlock: waits begun while a writer held it
  uint64_t with_waiters;     // signal/broadcast sent while a thread waited on the condvar
  uint64_t without_waiters;  // ... while none did
  uint64_t arrived_last;     // barrier: arrivals that completed it
  SparseHistogram* wait_histogram;
  BlameRow* blame;     // contended acquisitions by the hold they waited behind
  uint64_t cross_cpu;  // contended acquisitions the lock came to from a release on another CPU
  uint64_t same_cpu;   // ... from a release on this thread's CPU (the rest: not known)
  StackRow* stacks;    // contended acquisitions by call stack (those whose stack was captured)
  // Timed holds by the call stack of their release (those whose stack was captured): `waits` is
  // the holds they stand for (a sample's weight), `wait_ns` the hold time (weighted likewise).
  StackRow* hold_stacks;
  // --stacks all: acquisitions by call stack (`waits`: acquisitions; `wait_ns` unused).
  StackRow* acquire_stacks;
  // The hold_stacks row of the latest sampled hold (its stack's number, 0: not captured) and that
  // hold's length: like its histogram bucket (last_sample_bucket), the row counts the sample for
  // the acquisitions after it, and a table read before they come takes them out of it.
  uint32_t last_sample_stack;
  uint64_t last_sample_ns;
};
inline constexpr size_t kShortDetailBytes = offsetof(SiteDetail, contended);
inline constexpr uint32_t kInlineHoldBins = sizeof(SiteDetail::inline_hold_bins) / sizeof(uint64_t);
static_assert(offsetof(SiteDetail, inline_hold_bins) ==
                  offsetof(SiteDetail, inline_hold) + sizeof(SparseHistogram),
              "SparseHistogram::bins() are the words right after its header");
static_assert(offsetof(SiteDetail, owner_changes) < 64 &&
              offsetof(SiteDetail, full) ==
                  offsetof(SiteDetail, inline_hold_bins) + sizeof(SiteDetail::inline_hold_bins));
static_assert(kShortDetailBytes == 128 && sizeof(SiteDetail) == 320);

// The hot path reads and writes one cache line per site: `count`, `hold_countdown` and, for an
// acquire site, the entry of the release its locks were last released at. That pair lets a release
// go straight from the held lock to its own entry: on a thread that uses more (lock, site) pairs
// than its site cache holds (a server's thousands of item locks), a release then costs no lookup.
struct alignas(64) SiteStats {
  SiteKey key;
  uint32_t hold_countdown;  // acquisitions of this site until its next timed hold
  // A thread's table: its entries of one lock slot form a chain, newest first (SiteTable::
  // find_or_insert_via_lock): the number (index + 1) of the next older one, kChainEnd after the
  // last. 0 in a merged table's entries.
  uint32_t next_for_lock;
  uint64_t count;
  SiteDetail* detail;  // nullptr until needed (see SiteTable::detail)
  // Acquire site: the entry of the latest release of a lock taken here (same lock generation; its
  // key's site is that release's call site), nullptr before the first.
  SiteStats* release_stats;
  // Acquire site: the number (index + 1) of the entry of the latest lock this thread acquired
  // (blocking) while a lock taken here was its innermost held lock, 0 before the first: the
  // lock-order edge to that lock is known (lock_order.h). A thread's table only.
  uint32_t order_to;
  // Acquisitions here that took the lock from another thread (lock_owner.h), as counted on the hot
  // path: in this line, which the acquisition writes anyway (in the detail, a server's item locks
  // past their timed holds missed one more line each). Each 2^32 of them is carried into the
  // detail's owner_changes, which holds all of a merged table's (owner_changes_of).
  uint32_t owner_changes;
};
static_assert(sizeof(SiteStats) == 64);

// An entry's owner changes: its own count and what its detail holds.
inline uint64_t owner_changes_of(const SiteStats& stats) {
  return stats.owner_changes + (stats.detail != nullptr ? stats.detail->owner_changes : 0);
}

class SiteTable {
 public:
  // A merged table's entry for `key`, inserted if new; nullptr only when the kernel refuses memory.
  SiteStats* find_or_insert(const SiteKey& key);
  static constexpr uint32_t kChainEnd = 0xFFFFFFFFu;
  // A thread's own table is found by lock instead, and only so (it has no hash index): the entry
  // for `key`, inserted if new (nullptr only when the kernel refuses memory), from the chain of
  // the entries of the key's lock slot (each thread has a few per lock: its acquire and release
  // sites), which starts in an array indexed by lock slot. A server's thousands of locks cost a
  // few cache lines each here, and a first use no probe and no growth of a hash index (its memory
  // gone from every thread). The chain is newest first, and
  // lock generations only grow, so a walk for the lock's current generation stops at the first
  // entry of an older one (a lock re-created a million times at one address is not walked a
  // million entries deep); one for an older generation walks past the newer ones. Each link goes
  // to a smaller number (an older entry), so a walk always ends, even from a stale head (another
  // lock slot's entry: the walk stops there too). A table filled this way is never looked up
  // with find_or_insert, nor the other way round: the profile writer's and the process's merged
  // tables use the hash index. `number` receives the entry's number (index + 1).
  SiteStats* find_or_insert_via_lock(const SiteKey& key, uint32_t& number) {
    uint32_t* head = by_lock_.slot(key.lock_slot);
    if (head == nullptr) return nullptr;
    for (uint32_t n = *head, bound = static_cast<uint32_t>(used()) + 1; n != 0 && n < bound;) {
      SiteStats& entry = entries_[n - 1];
      if (entry.key.lock_slot != key.lock_slot || entry.key.generation < key.generation) break;
      if (entry.key == key) {
        number = n;
        return &entry;
      }
      bound = n;
      n = entry.next_for_lock;
    }
    number = static_cast<uint32_t>(used() + 1);
    SiteStats* entry = entries_.append([&](SiteStats& fresh) {
      fresh.key = key;
      fresh.next_for_lock = *head != 0 && *head < number ? *head : kChainEnd;
    });
    if (entry) *head = number;
    return entry;
  }
  SiteStats* find_or_insert_via_lock(const SiteKey& key) {
    uint32_t number = 0;
    return find_or_insert_via_lock(key, number);
  }

  // Requests the chain head of a lock slot, so that its miss overlaps the lock slot's.
  void prefetch_chain(uint32_t lock_slot) const { by_lock_.prefetch(lock_slot); }
  size_t used() const { return entries_.size(); }
  // Its memory on huge pages (mapped_memory.h): the profile writer's table, filled off the
  // program's critical sections. A thread's own table grows inside them, on 4 KiB pages.
  void use_huge_pages() {
    huge_pages_ = true;
    entries_.use_huge_pages();
    arena_.use_huge_pages();
  }
  // Room in the index for `entries` in all without growing it again (the profile writer's table,
  // which merges every thread's: one index instead of a dozen rebuilt as it doubles); on huge
  // pages, an arena that will hold a few hundred KiB of details starts with a whole huge page
  // (mapped_memory.h: one fault instead of one per 4 KiB).
  bool reserve(size_t entries) {
    if (huge_pages_ && entries * kShortDetailBytes >= kLargeArenaBytes)
      arena_.prefer_large_chunks();
    return entries * 2 <= index_capacity_ || grow_index(entries * 2);
  }
  static constexpr size_t kLargeArenaBytes = size_t{256} << 10;
  // The i-th inserted entry, i < used().
  SiteStats& inserted(size_t i) const { return entries_[i]; }
  // The entry's detail block, whole, allocated on first use (or grown from the short form);
  // nullptr when out of memory.
  SiteDetail* detail(SiteStats& stats) {
    return __builtin_expect(stats.detail != nullptr && stats.detail->full, 1)
               ? stats.detail
               : allocate_detail(stats, true);
  }
  // The entry's detail block, short or whole, for its hold fields and owner changes only (those
  // before `contended`); nullptr when out of memory.
  SiteDetail* hold_detail(SiteStats& stats) {
    return __builtin_expect(stats.detail != nullptr, 1) ? stats.detail
                                                        : allocate_detail(stats, false);
  }
  // The entry's 32-bit owner-change count just wrapped to 0: 2^32 of them go into its detail
  // (allocated short if it has none); false when out of memory.
  bool carry_owner_changes(SiteStats& stats) {
    SiteDetail* into = hold_detail(stats);
    if (into) into->owner_changes += uint64_t{1} << 32;
    return into != nullptr;
  }
  // A timed hold: exact (weight 1) or a sample standing for `weight` holds.
  bool record_hold(SiteDetail& detail, uint64_t ns, uint64_t weight) {
    if (weight <= 1) {
      detail.hold_sum_ns += ns;
      ++detail.hold_exact_count;
    } else {
      detail.hold_sampled_ns += ns;
      detail.hold_sampled_sq_ns2 += static_cast<double>(ns) * static_cast<double>(ns);
      ++detail.hold_sampled_count;
    }
    if (ns > detail.hold_max_ns) detail.hold_max_ns = ns;
    const int bucket = LogHistogramLayout::bucket_of(ns);
    if (weight > 1) detail.last_sample_bucket = static_cast<uint32_t>(bucket) + 1;
    return histogram_add(detail.hold_histogram, arena_, bucket, weight);
  }
  // An exact hold of `stats` (an entry of this table, a thread's own) recorded later, with the
  // next ones (kPendingHolds of them), by flush_pending_holds. A cold site's holds are all timed
  // (hold_timing.cpp), each into a detail line the thread has not touched for long: recorded one at
  // a time, every release of a server's thousands of item locks waited for that line's miss;
  // recorded in a batch, their misses overlap (sysbench mutex, 2 threads on 4,096 mutexes, whose
  // sites never get past their first 32 holds: bench/overhead/RESULTS.md). merge_from takes the
  // holds still pending, so no reader of the table misses one. Called inside lockscope (a signal
  // handler's lock never interleaves). Returns how many holds could not be recorded (out of
  // memory).
  uint32_t defer_exact_hold(SiteStats& stats, uint64_t ns) {
    const uint32_t n = pending_count_;
    pending_[n] = PendingHold{&stats, ns};
    // Published after the hold is written: a profile writer may read a thread it could not pause.
    __atomic_store_n(&pending_count_, n + 1, __ATOMIC_RELEASE);
    return n + 1 < kPendingHolds ? 0 : flush_pending_holds();
  }
  static constexpr uint32_t kPendingHolds = 64;
  // Records the pending holds into their entries' details, one after the other, each counted
  // flushed (pending_flushed_) just before it goes in: a handler that ends the process in the
  // middle (its final write merges this table) finds each hold once, but may miss the one being
  // written, as before holds were deferred; none is counted twice. Returns how many could not be
  // (out of memory). The table's owner, inside lockscope.
  uint32_t flush_pending_holds();
  // After merge_from(other): `source`, an entry of `other` whose thread holds one of its holds
  // that was not timed: the latest sample stood for it, but it has not ended, so it leaves that
  // sample's bucket and stack row (as a sample still held never enters them).
  void take_unended_hold(const SiteTable& other, const SiteStats& source);
  // A duration into a detail's sum, max and histogram (`weight` times); false when out of memory.
  bool record_duration(uint64_t ns, uint64_t weight, uint64_t& sum, uint64_t& max,
                       SparseHistogram*& histogram) {
    sum += ns * weight;
    if (ns > max) max = ns;
    return histogram_add(histogram, arena_, LogHistogramLayout::bucket_of(ns), weight);
  }
  // A contended acquisition at the detail's site that waited `wait_ns` behind the hold `key`
  // names; false when out of memory.
  bool record_blame(SiteDetail& detail, const BlameKey& key, uint64_t waits, uint64_t wait_ns);
  // Adds (count, ns) to the row of call stack `frames[0..depth)` (innermost first) in one of a
  // site detail's stack lists: `stacks` (contended waits and their wait), `hold_stacks` (the holds
  // a timed hold stands for and their time), `acquire_stacks` (acquisitions, --stacks all). Returns
  // the stack's number in this table's store, 0 when out of memory.
  uint32_t record_stack(StackRow*& rows, const uintptr_t* frames, uint32_t depth, uint64_t count,
                        uint64_t ns);
  // The same for a stack already in this table's store, by its number; false when out of memory.
  bool record_stack_number(StackRow*& rows, uint32_t stack, uint64_t count, uint64_t ns);
  // The number in this table's store of stack `number` of `other`'s (0: none, or memory refused).
  uint32_t same_stack(const SiteTable& other, uint32_t number);
  const StackStore& stacks() const { return stacks_; }
  // The number of stack `frames[0..depth)` in this table's store (0: memory refused); the owner's.
  uint32_t intern_stack(const uintptr_t* frames, uint32_t depth) {
    return stacks_.intern(frames, depth);
  }
  // Adds every entry of `other` into this table; returns the count of calls that could not be
  // added (out of memory). The acquisitions still to come that the latest sample of an entry
  // stands for (its countdown) are taken out of that sample's bucket and stack row, but for the
  // entries in `held_samples`, whose latest sample is still held (its thread holds it: a sample
  // counts once it is released): their countdowns wait for acquisitions of that held sample's.
  // (Taken out and given back, a gap longer than the previous sample's weight left the bucket
  // holding more than it had: sampling gaps are random, sampling_gap in hold_timing.cpp.) The holds
  // `other` has pending (defer_exact_hold) are added too.
  uint64_t merge_from(const SiteTable& other, const SiteStats* const* held_samples = nullptr,
                      size_t held_sample_count = 0);
  // Empties the table and gives all its memory back.
  void reset();
  // Empties the table for another thread: a small one keeps its memory (zeroed in place, no system
  // call: mapping and unmapping for each short-lived thread costs more than the thread itself),
  // a large one is reset.
  void clear_for_reuse();
  // Forgets the memory without unmapping it: a forked child's copy of another thread's table,
  // which that thread may have been changing at the fork.
  void abandon();

  // A full 64-bit mix (murmur3's finaliser): keys differ in a few bits of the lock slot or site,
  // and linear probing needs the low bits of the hash to differ too.
  static size_t hash(const SiteKey& key) {
    uint64_t h = key.site ^ ((static_cast<uint64_t>(key.lock_slot) << 32 |
                              static_cast<uint64_t>(key.generation) << 8 | key.operation) *
                             0x9E3779B97F4A7C15ull);
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ull;
    return static_cast<size_t>(h ^ (h >> 33));
  }

 private:
  // Takes `holds` that the latest sample of `from` (a detail of `other`) stood for out of that
  // sample's bucket in `into`, and out of its stack row when both details have rows.
  void take_from_latest_sample(SiteDetail& into, const SiteTable& other, const SiteDetail& from,
                               uint64_t holds);
  // A new detail block for `stats`, whole or short; a short one it had is copied into it.
  SiteDetail* allocate_detail(SiteStats& stats, bool whole);
  // A larger index: twice the size, or `at_least` slots rounded up to a power of two.
  bool grow_index(size_t at_least = 0);

  ChunkedArray<SiteStats, 6> entries_;
  // Lock slot -> number (index + 1) of the newest entry of its chain, 0 = none. clear_for_reuse
  // keeps it: a stale head is only a miss (it is checked against used() and by lock slot).
  ChunkedArray<uint32_t, 10, false> by_lock_;
  // A merged table's (find_or_insert): hash tag | entry number + 1 per slot; 0 = empty.
  uint64_t* index_ = nullptr;
  size_t index_capacity_ = 0;  // a power of two, kept at least twice used()
  BumpArena arena_;
  bool huge_pages_ = false;
  StackStore stacks_;
  // Exact holds not yet in their entries' details (defer_exact_hold): [pending_flushed_,
  // pending_count_).
  struct PendingHold {
    SiteStats* entry;
    uint64_t ns;
  };
  uint32_t pending_count_ = 0;
  uint32_t pending_flushed_ = 0;
  PendingHold pending_[kPendingHolds] = {};
  // Forgets them: the table's entries are going (reset, clear_for_reuse, abandon).
  void drop_pending_holds() { pending_count_ = pending_flushed_ = 0; }
};

inline void record_duration(uint64_t ns, uint64_t weight, uint64_t& sum, uint64_t& max,
                            Histogram& histogram) {
  sum += ns * weight;
  if (ns > max) max = ns;
  histogram[LogHistogramLayout::bucket_of(ns)] += weight;
}

}  // namespace lockscope::runtime
