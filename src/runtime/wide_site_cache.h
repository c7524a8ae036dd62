// A thread's second site cache, for a thread that uses more (lock, call site, operation) triples
// than its inline site cache (kSiteCacheSize entries) holds: a server's thousands of item locks.
//
// A miss in the inline cache takes the slow path, which without this finds the entry through the
// process's lock table (its index line, then the lock's slot) and the thread's chain of entries
// for that lock (its head, then each entry it walks): three or four cache misses one after the
// other, and the slow path's book-keeping. A hit here is one line, which names the lock's slot and
// the stats entry at once; the acquisition or release then goes on as the inline fast path's
// (acquire_slow, release_innermost). The same SiteCacheEntry, valid under the same rules (lock,
// site, operation, the thread's cache epoch and the process's identity epoch).
//
// Two-way (an entry's pair: slots i and i ^ 1, the most recently filled first; direct-mapped, a
// table half full would leave ~40 % of its keys sharing a slot with another), allocated (mmap, huge
// pages when large) once the entries it may hold pass kSiteCacheSize, at least as many as they are,
// up to kMaxWideCacheBits; replaced by a larger one as they grow (emptied: it refills as entries
// are used). It holds the entries of acquire operations, and the release entries only of locks
// released at more than one site (ThreadState::wide_entries): a release at its lock's usual site
// finds its entry from the hold's (SiteStats::release_stats), so a table of every release entry
// would be twice the memory, and its lookups twice the cache misses, for nothing. Only its thread
// writes it, from inside lockscope; it reads it outside too, so a replaced table stays mapped (a
// signal handler's lock may replace it while the code it interrupted reads the old one) until
// another thread claims the slot (whose epoch starts again at 1): then all of them are given back.
// One pointer names a table and its size, so a reader never pairs one table with another's size.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/runtime_state.h"

namespace lockscope::runtime {

// A thread just past the inline cache's size gets a small table: its memory counts once for each
// of a server's threads. (The tables a larger one replaced stay mapped: less than it, in all.)
inline constexpr uint32_t kMinWideCacheBits = 10;  // 1,024 entries, 56 KiB
inline constexpr uint32_t kMaxWideCacheBits = 16;  // 65,536 entries, 3.5 MiB

struct alignas(64) WideSiteCache {
  uint32_t bits;            // 2^bits entries follow the header
  WideSiteCache* replaced;  // the smaller table this one replaced (still mapped), or nullptr
  SiteCacheEntry* entries() { return reinterpret_cast<SiteCacheEntry*>(this + 1); }
};

// The slot of `key` (as site_cache_slot hashes it) in a cache of 2^bits entries.
inline size_t wide_cache_index(uintptr_t key, uint32_t bits) {
  return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

// The valid entry for (lock, site, op) with cache epoch `epoch`, or nullptr.
inline SiteCacheEntry* wide_cache_find(WideSiteCache* cache, const void* lock, uintptr_t site,
                                       uint16_t op, uint32_t epoch) {
  if (cache == nullptr) return nullptr;
  const size_t i = wide_cache_index(site_cache_key(lock, site, op), cache->bits);
  SiteCacheEntry* entries = cache->entries();
  if (site_cache_entry_is(entries[i], lock, site, op, epoch)) return &entries[i];
  if (site_cache_entry_is(entries[i ^ 1], lock, site, op, epoch)) return &entries[i ^ 1];
  return nullptr;
}

// The thread's entry for (lock, site, op) as the inline fast path takes it (summary mode's
// epoch), or nullptr.
inline SiteCacheEntry* wide_cached_site(ThreadState& self, const void* lock, uintptr_t site,
                                        format::Operation op) {
  return wide_cache_find(self.wide_cache, lock, site, static_cast<uint16_t>(op), self.epoch);
}

// Remembers `entry` (under its lock, site and operation), allocating or enlarging the cache for
// `table_size` entries first; does nothing for a small table, or when the kernel refuses
// memory. Called inside lockscope.
void wide_cache_fill(WideSiteCache*& cache, const SiteCacheEntry& entry, size_t table_size);
// Gives the memory of the cache and of those it replaced back (a slot claimed by another thread).
void wide_cache_release(WideSiteCache*& cache);

}  // namespace lockscope::runtime
