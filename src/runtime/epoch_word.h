// The cache epoch word: what a thread's site cache entries (SiteCacheEntry::epoch), held locks
// (HeldLock::epoch) and held stacks (HeldStack::epoch) are stamped with, and what they are compared
// against (ThreadState::epoch, thread_state.h). One 32-bit word, three fields:
//
//   bit  31      kTraceCacheTag   on an entry's epoch only: filled for the trace sink (or
//                                 --stacks all), which the inline fast paths never take
//                                 (recorder_bookkeeping.h: cache_epoch, traced_site)
//   bit  30      kPauseEpochBit   set and cleared in the thread's epoch by a profile writer that
//                                 pauses the thread: every cache lookup then misses and the thread
//                                 reaches a pause point (thread_pause.h); an entry filled meanwhile
//                                 carries it too (wide_site_cache.cpp ignores it when comparing)
//   bits 0..29   kEpochCountMask  the thread's table epoch: 1 when its slot is (re)claimed, +1 in
//                                 a fork child (its tables are new); an entry of an older epoch is
//                                 stale
//
// Invariants (checked below): the three fields are disjoint and fill the word, so a lookup that
// compares whole words misses when either flag differs; a held lock's or stack's epoch is the
// count alone (own_epoch()), so a pause never makes a hold look stale. The count goes back to 1
// when a slot is reused and grows by 1 per fork: a lineage of 2^30 forks would reach the pause
// bit.
#pragma once

#include <cstdint>

namespace lockscope::runtime {

inline constexpr uint32_t kEpochCountMask = 0x3FFFFFFFu;
inline constexpr uint32_t kPauseEpochBit = 0x40000000u;
inline constexpr uint32_t kTraceCacheTag = 0x80000000u;

static_assert((kPauseEpochBit & (kPauseEpochBit - 1)) == 0, "the pause flag is one bit");
static_assert((kTraceCacheTag & (kTraceCacheTag - 1)) == 0, "the trace tag is one bit");
static_assert((kEpochCountMask & kPauseEpochBit) == 0 && (kEpochCountMask & kTraceCacheTag) == 0 &&
                  (kPauseEpochBit & kTraceCacheTag) == 0,
              "the epoch word's fields are disjoint");
static_assert((kEpochCountMask | kPauseEpochBit | kTraceCacheTag) == UINT32_MAX,
              "the epoch word's fields fill it");
static_assert(kEpochCountMask + 1 == kPauseEpochBit, "the count lies below both flags");

}  // namespace lockscope::runtime
