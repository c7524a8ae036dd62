// Per-(lock generation, call site, operation) statistics, aggregated at the source.
//
// Each thread records into its own SiteTable without locks or atomics; when a thread exits, or its
// table fills past three quarters, the table is merged into the process-wide table under the merge
// spinlock and cleared. Tables are mmap'd once with MAP_NORESERVE: only the pages of used entries
// are ever touched, so a 1024-entry table of 3.3 KB entries costs a few pages per thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/log_histogram.h"

namespace lockscope::runtime {

using Histogram = uint64_t[LogHistogramLayout::kBuckets];

struct SiteKey {
  uint32_t lock_slot;   // index in the LockTable
  uint32_t generation;
  uintptr_t site;       // return address of the interposed call
  uint16_t operation;   // format::Operation
  bool operator==(const SiteKey&) const = default;
};

struct SiteStats {
  SiteKey key;
  bool used;
  uint32_t hold_countdown;  // acquisitions of this site until its next timed hold (count's line)
  uint64_t count;
  uint64_t contended;
  uint64_t failed;
  uint64_t wait_sum_ns;
  uint64_t wait_max_ns;
  uint64_t hold_sum_ns;  // scaled: a sampled uncontended hold counts `period` times
  uint64_t hold_max_ns;
  uint64_t hold_samples;
  uint64_t behind_readers;   // rwlock: waits begun while readers held it
  uint64_t behind_writer;    // rwlock: waits begun while a writer held it
  uint64_t with_waiters;     // signal/broadcast sent while a thread waited on the condvar
  uint64_t without_waiters;  // ... while none did
  uint64_t arrived_last;     // barrier: arrivals that completed it
  Histogram wait_histogram;
  Histogram hold_histogram;  // scaled like hold_sum_ns
};

class SiteTable {
 public:
  // Maps `capacity` (a power of two) entries; false when mmap fails.
  bool create(size_t capacity);
  // The entry for `key`, inserted if new; nullptr when the table is too full to insert.
  SiteStats* find_or_insert(const SiteKey& key) {
    size_t index = hash(key) & (capacity_ - 1);
    for (size_t probe = 0; probe < kMaxProbe; ++probe) {
      SiteStats& entry = entries_[index];
      if (!entry.used) {
        if (used_ >= capacity_ - capacity_ / 4) return nullptr;
        entry.used = true;
        entry.key = key;
        order_[used_++] = static_cast<uint32_t>(index);
        return &entry;
      }
      if (entry.key == key) return &entry;
      index = (index + 1) & (capacity_ - 1);
    }
    return nullptr;
  }
  bool nearly_full() const { return used_ >= capacity_ / 2; }
  size_t capacity() const { return capacity_; }
  size_t used() const { return used_; }
  // The i-th inserted entry, i < used(): lets merges and the writer skip never-touched pages.
  SiteStats& inserted(size_t i) { return entries_[order_[i]]; }
  // Adds every entry of `other` into this table; returns how many could not be inserted.
  uint64_t merge_from(SiteTable& other);
  // Zeroes the table and gives its pages back to the kernel.
  void clear();

  static size_t hash(const SiteKey& key) {
    uint64_t h = key.site * 0x9E3779B97F4A7C15ull;
    h ^= (static_cast<uint64_t>(key.lock_slot) << 20 | key.generation << 4 | key.operation) *
         0xC2B2AE3D27D4EB4Full;
    return static_cast<size_t>(h ^ (h >> 29));
  }

 private:
  static constexpr size_t kMaxProbe = 64;
  SiteStats* entries_ = nullptr;
  uint32_t* order_ = nullptr;  // indices of used entries, in insertion order
  size_t capacity_ = 0;
  size_t used_ = 0;
};

void add_stats(SiteStats& into, const SiteStats& from);

inline void record_duration(uint64_t ns, uint64_t weight, uint64_t& sum, uint64_t& max,
                            Histogram& histogram) {
  sum += ns * weight;
  if (ns > max) max = ns;
  histogram[LogHistogramLayout::bucket_of(ns)] += weight;
}

}  // namespace lockscope::runtime
