#include "runtime/wide_site_cache.h"

#include <sys/mman.h>

#include "runtime/errno_guard.h"
#include "runtime/mapped_memory.h"

namespace lockscope::runtime {
namespace {

// The size, in bits, `table_size` entries ask for: twice as many slots, within the bounds; 0
// while the inline cache is enough.
uint32_t wanted_bits(size_t table_size) {
  if (table_size <= kSiteCacheSize) return 0;
  uint32_t bits = kMinWideCacheBits;
  while (bits < kMaxWideCacheBits && (size_t{1} << bits) < table_size * 2) ++bits;
  return bits;
}

size_t bytes_of(uint32_t bits) {
  return sizeof(WideSiteCache) + (size_t{1} << bits) * sizeof(WideCacheSlot);
}

// Whether `slot` was filled under the cache epoch of `entry` (the pause bit aside: a fill while a
// profile writer pauses the thread, thread_pause.h, must not take the others for stale) and the
// process's current identity epoch; else it is stale.
bool current(const SiteCacheEntry& slot, const SiteCacheEntry& entry, uint32_t identity_epoch) {
  return ((slot.epoch ^ entry.epoch) & ~kPauseEpochBit) == 0 &&
         slot.identity_epoch == identity_epoch;
}

// Puts `entry` in `cache`: at the key's own entry if its window has one, else at the first empty
// or stale slot (see wide_site_cache.h), else at its home slot.
void place(WideSiteCache& cache, const SiteCacheEntry& entry, uint32_t identity_epoch) {
  const size_t mask = (size_t{1} << cache.bits) - 1;
  const size_t home =
      wide_cache_index(site_cache_key(entry.lock, entry.site, entry.operation), cache.bits);
  WideCacheSlot* entries = cache.entries();
  SiteCacheEntry* free_slot = nullptr;
  size_t i = home;
  for (uint32_t probe = 0; probe < kWideCacheProbes; ++probe, i = (i + 1) & mask) {
    SiteCacheEntry& slot = entries[i];
    if (site_cache_entry_keyed(slot, entry.lock, entry.site, entry.operation)) {
      slot = entry;
      return;
    }
    const bool empty = slot.lock == nullptr;
    if (free_slot == nullptr && (empty || !current(slot, entry, identity_epoch))) free_slot = &slot;
    if (empty) break;
  }
  *(free_slot ? free_slot : static_cast<SiteCacheEntry*>(&entries[home])) = entry;
}

}  // namespace

void wide_cache_fill(WideSiteCache*& cache, const SiteCacheEntry& entry, size_t table_size) {
  const uint32_t identity_epoch = runtime().identity_epoch.load(std::memory_order_relaxed);
  const uint32_t bits = wanted_bits(table_size);
  if (bits > (cache ? cache->bits : 0)) {
    const ErrnoGuard keep_errno;
    // Looked up at random: on 4 KiB pages nearly every lookup would also miss the TLB (a table of
    // 2 MiB or more is on huge pages, mapped_memory.h).
    void* memory = map_memory(bytes_of(bits), true, Fill::kAtRandom);
    if (memory != nullptr) {
      auto* grown = static_cast<WideSiteCache*>(memory);
      grown->bits = bits;
      grown->replaced = cache;
      // The smaller table's valid entries move over: refilled one slow path at a time, a
      // server's thousands would each take one again.
      if (cache != nullptr)
        for (size_t i = 0, n = size_t{1} << cache->bits; i < n; ++i) {
          const SiteCacheEntry& old = cache->entries()[i];
          if (old.lock != nullptr && current(old, entry, identity_epoch))
            place(*grown, old, identity_epoch);
        }
      // Published after it is filled in: a signal handler's lookup on this thread may read it.
      std::atomic_signal_fence(std::memory_order_release);
      cache = grown;
    }
  }
  if (cache != nullptr) place(*cache, entry, identity_epoch);
}

void wide_cache_release(WideSiteCache*& cache) {
  while (cache != nullptr) {
    WideSiteCache* replaced = cache->replaced;
    munmap(cache, bytes_of(cache->bits));
    cache = replaced;
  }
}

}  // namespace lockscope::runtime
