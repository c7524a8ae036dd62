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
// Open addressing: a key's entry is within kWideCacheProbes slots of its home slot (linear
// probing, so the next ones are usually in the same or the next cache line), the table at most
// half full. Every key the thread uses stays found: the two-way cache this replaces (slots i and
// i ^ 1) held a third key of a pair only by evicting one of the other two, and keys taken in turn
// that shared a pair missed every time (sysbench mutex, 2 threads on 4,096 mutexes: 18,000 of its
// 100,000 acquisitions took the slow path besides the 8,200 first uses of a site; now 500). A slot,
// once filled, is never emptied: an entry filled
// under an older epoch is stale, and the next fill of a key whose window has no room left takes it
// over, or the home slot when all are in use. So every slot between a key's home and its entry is
// filled, and a lookup stops at the first empty one. Allocated (mmap, huge pages when large) once
// the entries it may hold pass kSiteCacheSize, with twice as many slots as they are, up to
// kMaxWideCacheBits (past half of that, keys take each other's slots); replaced by a larger one as
// they grow, which takes over its valid entries. It holds the entries of acquire operations, and
// the release entries only of locks released at more than one site (ThreadState::wide_entries): a
// release at its lock's usual site finds its entry from the hold's (SiteStats::release_stats), so a
// table of every release entry would be twice the memory, and its lookups twice the cache misses,
// for nothing. Only its thread writes it, from inside lockscope; it reads it outside too, so a
// replaced table stays mapped (a signal handler's lock may replace it while the code it interrupted
// reads the old one) until another thread claims the slot (whose epoch starts again at 1): then all
// of them are given back. One pointer names a table and its size, so a reader never pairs one table
// with another's size.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/runtime_state.h"

namespace lockscope::runtime {

// A thread just past the inline cache's size gets a small table: its memory counts once for each
// of a server's threads. (The tables a larger one replaced stay mapped: less than it, in all.)
inline constexpr uint32_t kMinWideCacheBits = 10;  // 1,024 slots, 64 KiB
inline constexpr uint32_t kMaxWideCacheBits = 16;  // 65,536 slots, 4 MiB

// A slot: an entry on a cache line of its own. Packed at 56 bytes, 7 in 8 entries straddled two
// lines, and a lookup (which reads the entry's first 48 bytes) missed both.
struct alignas(64) WideCacheSlot : SiteCacheEntry {};
static_assert(sizeof(WideCacheSlot) == 64);

struct alignas(64) WideSiteCache {
  uint32_t bits;            // 2^bits slots follow the header
  WideSiteCache* replaced;  // the smaller table this one replaced (still mapped), or nullptr
  WideCacheSlot* entries() { return reinterpret_cast<WideCacheSlot*>(this + 1); }
};

// The slot of `key` (as site_cache_slot hashes it) in a cache of 2^bits entries.
inline size_t wide_cache_index(uintptr_t key, uint32_t bits) {
  return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

// How far from its home slot a key's entry may be.
inline constexpr uint32_t kWideCacheProbes = 8;

// The valid entry for (lock, site, op) with cache epoch `epoch`, or nullptr.
inline SiteCacheEntry* wide_cache_find(WideSiteCache* cache, const void* lock, uintptr_t site,
                                       uint16_t op, uint32_t epoch) {
  if (cache == nullptr) return nullptr;
  const size_t mask = (size_t{1} << cache->bits) - 1;
  size_t i = wide_cache_index(site_cache_key(lock, site, op), cache->bits);
  WideCacheSlot* entries = cache->entries();
  for (uint32_t probe = 0; probe < kWideCacheProbes; ++probe, i = (i + 1) & mask) {
    if (site_cache_entry_is(entries[i], lock, site, op, epoch)) return &entries[i];
    if (entries[i].lock == nullptr) return nullptr;
  }
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
