#include "runtime/wide_site_cache.h"

#include <errno.h>
#include <sys/mman.h>

#include "runtime/mapped_memory.h"

namespace lockscope::runtime {
namespace {

// The size, in bits, `table_size` entries ask for: at least as many slots (each key has two, so
// the load stays between 1/4 and 1/2 of the pairs' room), within the bounds; 0 while the inline
// cache is enough. Twice that evicted fewer keys, but for 4,096 locks it was a table the size of
// the L2 cache, whose every lookup missed it.
uint32_t wanted_bits(size_t table_size) {
  if (table_size <= kSiteCacheSize) return 0;
  uint32_t bits = kMinWideCacheBits;
  while (bits < kMaxWideCacheBits && (size_t{1} << bits) < table_size) ++bits;
  return bits;
}

size_t bytes_of(uint32_t bits) {
  return sizeof(WideSiteCache) + (size_t{1} << bits) * sizeof(SiteCacheEntry);
}

}  // namespace

void wide_cache_fill(WideSiteCache*& cache, const SiteCacheEntry& entry, size_t table_size) {
  const uint32_t bits = wanted_bits(table_size);
  if (bits > (cache ? cache->bits : 0)) {
    const int saved_errno = errno;
    // Looked up at random: on 4 KiB pages nearly every lookup would also miss the TLB (a table of
    // 2 MiB or more is on huge pages, mapped_memory.h).
    void* memory = map_memory(bytes_of(bits), true, Fill::kAtRandom);
    if (memory != nullptr) {
      auto* grown = static_cast<WideSiteCache*>(memory);
      grown->bits = bits;
      grown->replaced = cache;
      // Published after it is filled in: a signal handler's lookup on this thread may read it.
      std::atomic_signal_fence(std::memory_order_release);
      cache = grown;
    }
    errno = saved_errno;
  }
  if (cache == nullptr) return;
  const size_t i =
      wide_cache_index(site_cache_key(entry.lock, entry.site, entry.operation), cache->bits);
  SiteCacheEntry* entries = cache->entries();
  // The pair's other entry keeps the one filled before, unless that was this key's.
  if (!(entries[i].lock == entry.lock && entries[i].site == entry.site &&
        entries[i].operation == entry.operation))
    entries[i ^ 1] = entries[i];
  entries[i] = entry;
}

void wide_cache_release(WideSiteCache*& cache) {
  while (cache != nullptr) {
    WideSiteCache* replaced = cache->replaced;
    munmap(cache, bytes_of(cache->bits));
    cache = replaced;
  }
}

}  // namespace lockscope::runtime
