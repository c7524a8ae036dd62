#include "runtime/site_table.h"

#include <sys/mman.h>

#include <atomic>
#include <cstring>
#include <initializer_list>

#include "runtime/mapped_memory.h"

namespace lockscope::runtime {

namespace {
// The bin tagged `tag` (its bucket in the top 8 bits) in `histogram`, nullptr when none.
uint64_t* bin_of(SparseHistogram* histogram, uint64_t tag) {
  if (!histogram) return nullptr;
  uint64_t* bins = histogram->bins();
  for (uint32_t i = 0; i < histogram->size; ++i)
    if ((bins[i] & ~kBinCountMask) == tag) return &bins[i];
  return nullptr;
}
}  // namespace

bool histogram_add(SparseHistogram*& histogram, BumpArena& arena, int bucket, uint64_t weight) {
  const uint64_t tag = static_cast<uint64_t>(bucket) << 56;
  if (uint64_t* bin = bin_of(histogram, tag)) {
    *bin += weight;
    return true;
  }
  if (!histogram || histogram->size == histogram->capacity) {
    uint32_t capacity = histogram ? histogram->capacity * 2 : 4;
    if (capacity > LogHistogramLayout::kBuckets) capacity = LogHistogramLayout::kBuckets;
    auto* grown = static_cast<SparseHistogram*>(
        arena.allocate(sizeof(SparseHistogram) + capacity * sizeof(uint64_t)));
    if (!grown) return false;
    grown->capacity = capacity;
    if (histogram) {
      std::memcpy(grown->bins(), histogram->bins(), histogram->size * sizeof(uint64_t));
      grown->size = histogram->size;
    }
    histogram = grown;  // the old block stays in the arena (readers may still hold it)
  }
  histogram->bins()[histogram->size] = tag | weight;
  ++histogram->size;
  return true;
}

void histogram_remove(SparseHistogram* histogram, int bucket, uint64_t weight) {
  const uint64_t tag = static_cast<uint64_t>(bucket) << 56;
  if (uint64_t* bin = bin_of(histogram, tag)) {
    const uint64_t count = *bin & kBinCountMask;
    *bin = tag | (count > weight ? count - weight : 0);
  }
}

// An index slot: the entry's number + 1 in the low 32 bits (0 = empty), the high 32 bits of its
// key's hash above them, so a probe that meets another key's slot moves on without loading that
// entry (on a table of a million sites, each load is a cache miss).
namespace {
constexpr uint64_t slot_of(uint32_t number_plus_one, size_t hash) {
  return (static_cast<uint64_t>(hash) & 0xFFFFFFFF00000000ull) | number_plus_one;
}
}  // namespace

SiteStats* SiteTable::find_or_insert(const SiteKey& key) {
  if (used() * 2 >= index_capacity_ && !grow_index() && used() + 1 >= index_capacity_)
    return nullptr;
  const size_t mask = index_capacity_ - 1;
  const size_t h = hash(key);
  const uint64_t tag = h & 0xFFFFFFFF00000000ull;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const uint64_t slot = index_[i];
    const auto number = static_cast<uint32_t>(slot);
    if (number == 0) {
      const size_t at = used();
      SiteStats* entry = entries_.append([&](SiteStats& fresh) { fresh.key = key; });
      if (entry) index_[i] = slot_of(static_cast<uint32_t>(at + 1), h);
      return entry;
    }
    if ((slot & 0xFFFFFFFF00000000ull) != tag) continue;
    SiteStats& entry = entries_[number - 1];
    if (entry.key == key) return &entry;
  }
}

bool SiteTable::grow_index(size_t at_least) {
  size_t capacity = index_capacity_ ? index_capacity_ * 2 : 256;
  while (capacity < at_least) capacity *= 2;
  if (capacity > (size_t{1} << 32)) return false;
  void* memory = map_memory(capacity * sizeof(uint64_t), huge_pages_, Fill::kAtRandom);
  if (memory == nullptr) return false;
  auto* index = static_cast<uint64_t*>(memory);
  const size_t mask = capacity - 1;
  for (size_t n = 0; n < used(); ++n) {
    const size_t h = hash(entries_[n].key);
    size_t i = h & mask;
    while (index[i] != 0) i = (i + 1) & mask;
    index[i] = slot_of(static_cast<uint32_t>(n + 1), h);
  }
  if (index_) munmap(index_, index_capacity_ * sizeof(uint64_t));
  index_ = index;
  index_capacity_ = capacity;
  return true;
}

SiteDetail* SiteTable::allocate_detail(SiteStats& stats, bool whole) {
  auto* detail = static_cast<SiteDetail*>(
      arena_.allocate(whole ? sizeof(SiteDetail) : kShortDetailBytes, alignof(SiteDetail)));
  if (detail == nullptr) return nullptr;
  SiteDetail* const replaced = stats.detail;
  if (replaced != nullptr) {
    // The short block it replaces stays in the arena (a reader may still hold it), its holds
    // copied, the histogram too when it is still the inline one.
    __builtin_memcpy(static_cast<void*>(detail), replaced, kShortDetailBytes);
    if (detail->hold_histogram == &replaced->inline_hold)
      detail->hold_histogram = &detail->inline_hold;
  } else {
    detail->inline_hold.capacity = kInlineHoldBins;
    detail->hold_histogram = &detail->inline_hold;
  }
  detail->full = whole ? 1 : 0;
  stats.detail = detail;
  return detail;
}

namespace {
bool add_histogram(SparseHistogram*& into, BumpArena& arena, const SparseHistogram* from) {
  bool ok = true;
  for_each_bin(from, [&](int bucket, uint64_t count) {
    ok = histogram_add(into, arena, bucket, count) && ok;
  });
  return ok;
}
}  // namespace

namespace {
// What identifies a row of a site's blame and stack lists.
const BlameKey& key_of(const BlameRow& row) {
  return row.key;
}
void set_key(BlameRow& row, const BlameKey& key) {
  row.key = key;
}
uint32_t key_of(const StackRow& row) {
  return row.stack;
}
void set_key(StackRow& row, uint32_t stack) {
  row.stack = stack;
}

// Adds (waits, wait_ns) to the row of the list at `head` whose key is `key`, or to a new row
// appended last (a reader walking the list meanwhile sees it whole or not at all); false when out
// of memory.
template <typename Row, typename Key>
bool add_to_rows(Row*& head, BumpArena& arena, Key key, uint64_t waits, uint64_t wait_ns) {
  Row** link = &head;
  for (; *link; link = &(*link)->next)
    if (key_of(**link) == key) {
      (*link)->waits += waits;
      (*link)->wait_ns += wait_ns;
      return true;
    }
  auto* row = static_cast<Row*>(arena.allocate(sizeof(Row)));  // zero-filled
  if (!row) return false;
  set_key(*row, key);
  row->waits = waits;
  row->wait_ns = wait_ns;
  *link = row;
  return true;
}
}  // namespace

bool SiteTable::record_blame(SiteDetail& detail, const BlameKey& key, uint64_t waits,
                             uint64_t wait_ns) {
  return add_to_rows(detail.blame, arena_, key, waits, wait_ns);
}

uint32_t SiteTable::record_stack(StackRow*& rows, const uintptr_t* frames, uint32_t depth,
                                 uint64_t count, uint64_t ns) {
  const uint32_t stack = stacks_.intern(frames, depth);
  return stack != 0 && add_to_rows(rows, arena_, stack, count, ns) ? stack : 0;
}

bool SiteTable::record_stack_number(StackRow*& rows, uint32_t stack, uint64_t count, uint64_t ns) {
  return add_to_rows(rows, arena_, stack, count, ns);
}

uint32_t SiteTable::same_stack(const SiteTable& other, uint32_t number) {
  uintptr_t frames[StackStore::kMaxDepth];
  return number == 0 ? 0 : stacks_.intern(frames, other.stacks_.copy(number, frames));
}

namespace {
// Takes up to (holds, ns) out of the row of `stack` in `rows`.
void take_from_row(StackRow* rows, uint32_t stack, uint64_t holds, uint64_t ns) {
  for (StackRow* row = rows; row; row = row->next)
    if (row->stack == stack) {
      row->waits = row->waits > holds ? row->waits - holds : 0;
      row->wait_ns = row->wait_ns > ns ? row->wait_ns - ns : 0;
      return;
    }
}
}  // namespace

void SiteTable::take_from_latest_sample(SiteDetail& into, const SiteTable& other,
                                        const SiteDetail& from, uint64_t holds) {
  if (holds == 0) return;
  if (from.last_sample_bucket != 0)
    histogram_remove(into.hold_histogram, static_cast<int>(from.last_sample_bucket) - 1, holds);
  if (from.full && into.full && from.last_sample_stack != 0)
    take_from_row(into.hold_stacks, same_stack(other, from.last_sample_stack), holds,
                  holds * from.last_sample_ns);
}

void SiteTable::take_unended_hold(const SiteTable& other, const SiteStats& source) {
  const SiteDetail* from = source.detail;
  if (from == nullptr || from->last_sample_bucket == 0) return;
  SiteStats* target = find_or_insert(source.key);
  if (target != nullptr && target->detail != nullptr)
    take_from_latest_sample(*target->detail, other, *from, 1);
}

uint64_t SiteTable::merge_from(const SiteTable& other, const SiteStats* const* held_samples,
                               size_t held_sample_count) {
  uint64_t dropped = 0;
  for (size_t n = 0; n < other.used(); ++n) {
    const SiteStats& source = other.inserted(n);
    // The acquisitions its countdown waits for are a sample's still held, not the latest
    // recorded sample's: nothing to take out of that one's bucket and row.
    bool sample_held = false;
    for (size_t i = 0; i < held_sample_count && !sample_held; ++i)
      sample_held = held_samples[i] == &source;
    const uint32_t still_to_come = sample_held ? 0 : source.hold_countdown;
    SiteStats* target = find_or_insert(source.key);
    if (!target) {
      dropped += source.count;
      continue;
    }
    target->count += source.count;
    const SiteDetail* from = source.detail;
    // A merged table keeps every owner change in its detail (its entries' 32-bit counts would
    // wrap): a source entry without a detail needs the short one for them.
    if (!from && source.owner_changes == 0) continue;
    SiteDetail* into = from && from->full ? detail(*target) : hold_detail(*target);
    if (!into) {
      dropped += source.count;
      continue;
    }
    into->owner_changes += source.owner_changes;
    if (!from) continue;
    into->hold_sum_ns += from->hold_sum_ns;
    into->hold_exact_count += from->hold_exact_count;
    into->hold_sampled_ns += from->hold_sampled_ns;
    into->hold_sampled_sq_ns2 += from->hold_sampled_sq_ns2;
    into->hold_sampled_count += from->hold_sampled_count;
    if (from->hold_max_ns > into->hold_max_ns) into->hold_max_ns = from->hold_max_ns;
    into->owner_changes += from->owner_changes;  // its carries
    const bool histogram_kept = add_histogram(into->hold_histogram, arena_, from->hold_histogram);
    if (!from->full) {
      // The acquisitions the latest sample stands for that are still to come (see
      // SiteDetail::last_sample_bucket).
      take_from_latest_sample(*into, other, *from, still_to_come);
      if (!histogram_kept) dropped += source.count;
      continue;
    }
    into->contended += from->contended;
    into->failed += from->failed;
    into->wait_sum_ns += from->wait_sum_ns;
    if (from->wait_max_ns > into->wait_max_ns) into->wait_max_ns = from->wait_max_ns;
    into->behind_readers += from->behind_readers;
    into->behind_writer += from->behind_writer;
    into->with_waiters += from->with_waiters;
    into->without_waiters += from->without_waiters;
    into->arrived_last += from->arrived_last;
    into->cross_cpu += from->cross_cpu;
    into->same_cpu += from->same_cpu;
    bool blamed = true;
    uintptr_t frames[StackStore::kMaxDepth];
    for (const BlameRow* row = from->blame; row; row = row->next) {
      // The waiter's stack is a number in `other`'s store: the same frames get this one's.
      BlameKey key = row->key;
      if (key.waiter_stack != 0)
        key.waiter_stack = stacks_.intern(frames, other.stacks_.copy(key.waiter_stack, frames));
      const bool kept_stack = row->key.waiter_stack == 0 || key.waiter_stack != 0;
      blamed = record_blame(*into, key, row->waits, row->wait_ns) && kept_stack && blamed;
    }
    // Each stack list, its stacks re-numbered in this table's store.
    for (StackRow* SiteDetail::*list :
         {&SiteDetail::stacks, &SiteDetail::hold_stacks, &SiteDetail::acquire_stacks})
      for (const StackRow* row = from->*list; row; row = row->next) {
        const uint32_t depth = other.stacks_.copy(row->stack, frames);
        blamed = record_stack(into->*list, frames, depth, row->waits, row->wait_ns) != 0 && blamed;
      }
    // The acquisitions the latest sample stands for that are still to come, out of its bucket
    // and its stack row (SiteDetail::last_sample_bucket, last_sample_stack), once the rows are in.
    take_from_latest_sample(*into, other, *from, still_to_come);
    if (!add_histogram(into->wait_histogram, arena_, from->wait_histogram) || !histogram_kept ||
        !blamed)
      dropped += source.count;
  }
  // After the details: a thread that could not be paused (thread_pause.h) and flushes meanwhile
  // counts each hold flushed just before it records it, so a hold read here is not in a detail
  // read above (one such thread may lose a few: never one counted twice).
  // The cursor before the count: a flush empties the list, then rewinds the cursor.
  std::atomic_signal_fence(std::memory_order_seq_cst);  // (x86: loads are not reordered)
  const uint32_t flushed = __atomic_load_n(&other.pending_flushed_, __ATOMIC_ACQUIRE);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  uint32_t pending = __atomic_load_n(&other.pending_count_, __ATOMIC_ACQUIRE);
  if (pending > kPendingHolds) pending = kPendingHolds;
  for (uint32_t i = flushed; i < pending; ++i) {
    const PendingHold hold = other.pending_[i];
    if (hold.entry == nullptr) continue;
    SiteStats* target = find_or_insert(hold.entry->key);
    SiteDetail* into = target ? hold_detail(*target) : nullptr;
    if (!into || !record_hold(*into, hold.ns, 1)) ++dropped;
  }
  return dropped;
}

uint32_t SiteTable::flush_pending_holds() {
  const uint32_t count = pending_count_ < kPendingHolds ? pending_count_ : kPendingHolds;
  // Three passes, so that the misses of each overlap: the entries (for their detail pointers),
  // the details' lines (the hold fields and the first inline bins, then the other bins), the holds.
  for (uint32_t i = 0; i < count; ++i) __builtin_prefetch(pending_[i].entry);
  for (uint32_t i = 0; i < count; ++i)
    if (const SiteDetail* detail = pending_[i].entry->detail) {
      __builtin_prefetch(detail, 1);
      __builtin_prefetch(reinterpret_cast<const char*>(detail) + 64, 1);
    }
  uint32_t lost = 0;
  for (uint32_t i = 0; i < count; ++i) {
    // Counted flushed before it is in: a reader in between may miss this one hold, never count
    // it twice.
    __atomic_store_n(&pending_flushed_, i + 1, __ATOMIC_RELEASE);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    SiteDetail* detail = hold_detail(*pending_[i].entry);
    if (detail == nullptr || !record_hold(*detail, pending_[i].ns, 1)) ++lost;
  }
  // Emptied, then rewound: a reader between the two finds nothing pending.
  __atomic_store_n(&pending_count_, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&pending_flushed_, 0, __ATOMIC_RELEASE);
  return lost;
}

void SiteTable::reset() {
  drop_pending_holds();
  stacks_.reset();
  entries_.reset();
  by_lock_.reset();
  arena_.reset();
  if (index_) munmap(index_, index_capacity_ * sizeof(uint64_t));
  index_ = nullptr;
  index_capacity_ = 0;
}

void SiteTable::clear_for_reuse() {
  drop_pending_holds();
  constexpr size_t kSmallIndex = 256;
  if (index_capacity_ <= kSmallIndex && entries_.in_first_chunk() && stacks_.clear_if_small() &&
      entries_.clear_in_first_chunk() && arena_.rewind()) {
    if (index_) std::memset(index_, 0, index_capacity_ * sizeof(uint64_t));
    return;
  }
  reset();
}

void SiteTable::abandon() {
  drop_pending_holds();
  stacks_.abandon();
  entries_.abandon();
  by_lock_.abandon();
  arena_.abandon();
  index_ = nullptr;
  index_capacity_ = 0;
}

}  // namespace lockscope::runtime
