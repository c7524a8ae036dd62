#include "runtime/wide_site_cache.h"

#include <errno.h>
#include <sys/mman.h>

namespace lockscope::runtime {
namespace {

// The size, in bits, a table of `table_size` entries asks for: twice its size, within the bounds;
// 0 while the inline cache is enough.
uint32_t wanted_bits(size_t table_size) {
  if (table_size <= kSiteCacheSize) return 0;
  uint32_t bits = kMinWideCacheBits;
  while (bits < kMaxWideCacheBits && (size_t{1} << bits) < table_size * 2) ++bits;
  return bits;
}

constexpr size_t kHugePageBytes = size_t{2} << 20;

size_t bytes_of(uint32_t bits) {
  return (size_t{1} << bits) * sizeof(SiteCacheEntry);
}

}  // namespace

void wide_cache_fill(WideSiteCache& cache, uintptr_t key, const SiteCacheEntry& entry,
                     size_t table_size) {
  const uint32_t bits = wanted_bits(table_size);
  if (bits == 0 && cache.entries == nullptr) return;
  if (bits > cache.bits) {
    const int saved_errno = errno;
    void* memory = mmap(nullptr, bytes_of(bits), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (memory != MAP_FAILED) {
      // Looked up at random: on 4 KiB pages nearly every lookup would also miss the TLB.
      if (bytes_of(bits) >= kHugePageBytes) madvise(memory, bytes_of(bits), MADV_HUGEPAGE);
      wide_cache_release(cache);
      cache.entries = static_cast<SiteCacheEntry*>(memory);
      cache.bits = bits;
    }
    errno = saved_errno;
    if (cache.entries == nullptr) return;
  }
  cache.entries[wide_cache_index(key, cache.bits)] = entry;
}

void wide_cache_release(WideSiteCache& cache) {
  if (cache.entries != nullptr) munmap(cache.entries, bytes_of(cache.bits));
  cache.entries = nullptr;
  cache.bits = 0;
}

}  // namespace lockscope::runtime
