#include "runtime/site_table.h"

#include <sys/mman.h>

#include <cstring>

namespace lockscope::runtime {

bool SiteTable::create(size_t capacity) {
  const size_t entry_bytes = capacity * sizeof(SiteStats);
  void* memory = mmap(nullptr, entry_bytes + capacity * sizeof(uint32_t), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) return false;
  entries_ = static_cast<SiteStats*>(memory);
  order_ = reinterpret_cast<uint32_t*>(static_cast<char*>(memory) + entry_bytes);
  capacity_ = capacity;
  used_ = 0;
  return true;
}

void add_stats(SiteStats& into, const SiteStats& from) {
  into.count += from.count;
  into.contended += from.contended;
  into.failed += from.failed;
  into.wait_sum_ns += from.wait_sum_ns;
  if (from.wait_max_ns > into.wait_max_ns) into.wait_max_ns = from.wait_max_ns;
  into.hold_sum_ns += from.hold_sum_ns;
  if (from.hold_max_ns > into.hold_max_ns) into.hold_max_ns = from.hold_max_ns;
  into.hold_samples += from.hold_samples;
  into.behind_readers += from.behind_readers;
  into.behind_writer += from.behind_writer;
  into.with_waiters += from.with_waiters;
  into.without_waiters += from.without_waiters;
  into.arrived_last += from.arrived_last;
  for (int b = 0; b < LogHistogramLayout::kBuckets; ++b) {
    into.wait_histogram[b] += from.wait_histogram[b];
    into.hold_histogram[b] += from.hold_histogram[b];
  }
}

uint64_t SiteTable::merge_from(SiteTable& other) {
  uint64_t dropped = 0;
  for (size_t i = 0; i < other.used_; ++i) {
    const SiteStats& source = other.inserted(i);
    SiteStats* target = find_or_insert(source.key);
    if (!target) {
      dropped += source.count;
      continue;
    }
    add_stats(*target, source);
  }
  return dropped;
}

void SiteTable::clear() {
  if (!entries_ || used_ == 0) return;
  // MADV_DONTNEED on a private anonymous mapping gives zero pages back on the next touch.
  madvise(entries_, capacity_ * (sizeof(SiteStats) + sizeof(uint32_t)), MADV_DONTNEED);
  used_ = 0;
}

}  // namespace lockscope::runtime
