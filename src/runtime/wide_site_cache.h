// A thread's second site cache, for a thread that uses more (lock, call site, operation) triples
// than its inline site cache (kSiteCacheSize entries) holds: a server's thousands of item locks.
//
// The inline cache serves the fast path; a miss there takes the slow path, which without this
// would find the entry through the process's lock table (its index line, then the lock's slot)
// and the thread's chain of entries for that lock (its head, then each entry it walks): three or
// four cache misses one after the other. A hit here is one line, which names the lock's slot and
// the stats entry at once, so their misses overlap. The same SiteCacheEntry, valid under the same
// rules (lock, site, operation, the thread's cache epoch and the process's identity epoch).
//
// Direct-mapped, allocated (mmap) once the thread's site table passes kSiteCacheSize entries, at
// least twice that table's size, up to kMaxWideCacheBits; replaced by a larger one as the table
// grows (emptied: it refills as entries are used). Only its thread reads or writes it, from
// inside lockscope (InsideLockscope). A thread slot keeps it across a flush (the epoch changes) and
// gives it back when another thread claims the slot (its epoch starts again at 1).
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/runtime_state.h"

namespace lockscope::runtime {

inline constexpr uint32_t kMinWideCacheBits = 12;  // 4,096 entries, 192 KiB
inline constexpr uint32_t kMaxWideCacheBits = 16;  // 65,536 entries, 3 MiB

// The slot of `key` (as site_cache_slot hashes it) in a cache of 2^bits entries.
inline size_t wide_cache_index(uintptr_t key, uint32_t bits) {
  return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

// The valid entry for (lock, site, op) with cache epoch `epoch`, or nullptr.
inline SiteCacheEntry* wide_cache_find(const WideSiteCache& cache, uintptr_t key, const void* lock,
                                       uintptr_t site, uint16_t op, uint32_t epoch,
                                       uint32_t identity_epoch) {
  if (cache.entries == nullptr) return nullptr;
  SiteCacheEntry& entry = cache.entries[wide_cache_index(key, cache.bits)];
  if (entry.lock == lock && entry.site == site && entry.operation == op && entry.epoch == epoch &&
      entry.identity_epoch == identity_epoch)
    return &entry;
  return nullptr;
}

// Requests the line wide_cache_find will read, so that its miss overlaps the lock word's (issued
// before the real trylock or unlock of a call that missed the inline cache).
inline void wide_cache_prefetch(const WideSiteCache& cache, const void* lock, uintptr_t site,
                                uint16_t op) {
  if (cache.entries != nullptr)
    __builtin_prefetch(
        &cache.entries[wide_cache_index(site_cache_key(lock, site, op), cache.bits)]);
}

// Remembers `entry` (under `key`), allocating or enlarging the cache for a table of `table_size`
// entries first; does nothing for a small table, or when the kernel refuses memory.
void wide_cache_fill(WideSiteCache& cache, uintptr_t key, const SiteCacheEntry& entry,
                     size_t table_size);
// Gives the cache's memory back (a slot claimed by another thread).
void wide_cache_release(WideSiteCache& cache);

}  // namespace lockscope::runtime
