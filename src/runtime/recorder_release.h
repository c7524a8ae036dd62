// The release path of every primitive (release()): the real unlock first, then the book-keeping;
// inline at a cached site, else release_slow.
#pragma once

#include <cstdint>

#include "runtime/recorder_bookkeeping.h"

namespace lockscope::runtime {

// Whether the thread holds `held`'s lock in another hold than `held` (which may be a copy taken
// off the stack): a re-lock inside an outer hold of it.
inline bool held_further_out(const ThreadState& self, const HeldLock& held) {
  for (uint32_t i = 0; i < self.held_depth && i < kMaxHeldLocks; ++i)
    if (&self.held[i] != &held && self.held[i].lock == held.lock) return true;
  return false;
}

// Takes the thread's hold `i` off its held stack (the holds above it move down) and returns it: a
// release of a lock held under others.
inline HeldLock take_held(ThreadState& self, uint32_t i) {
  const HeldLock held = self.held[i];
  for (uint32_t k = i + 1; k < self.held_depth; ++k) self.held[k - 1] = self.held[k];
  --self.held_depth;
  return held;
}

// The release entry of the hold `held` of `lock` released at `site`, without the slow path's
// lookup: its acquire site's last release entry when that was at `site`, else the site caches';
// nullptr when neither knows it (or the hold's entry is not the thread's current epoch's).
inline SiteStats* known_release_entry(ThreadState& self, const HeldLock& held, const void* lock,
                                      uintptr_t site) {
  SiteStats* stats = held.epoch == own_epoch(self) ? held.entry->release_stats : nullptr;
  if (stats != nullptr && stats->key.site == site) return stats;
  const auto op = static_cast<format::Operation>(held.release_operation);
  open_cache_window(self);
  SiteCacheEntry* cached = cached_site(self, lock, site, op);
  if (cached == nullptr) cached = wide_cached_site(self, lock, site, op);
  stats = cached ? cached->stats : nullptr;
  close_cache_window(self);
  return stats;
}

// The release of a hold not stamped (so not checked for waiters: hold_made_wait) whose lock word
// says a thread is blocked acquiring the lock (Release::contended: a mutex's): the hold is
// published for that waiter (publish_holder). A lock's first waiter is behind such a hold.
template <typename Release>
__attribute__((always_inline)) inline bool unstamped_and_contended(const HeldLock& held,
                                                                   const Release& real_release) {
  if constexpr (requires { real_release.contended(); })
    return !held.stamped && real_release.contended() && real_release.owner_word();
  else
    return false;
}
// Before the real unlock of `held`, a mutex whose owner word keeps its owner: who held it, for a
// thread waiting for it (`made_wait`, unstamped_and_contended, or a condition waiter this hold
// signalled, which re-takes the mutex behind it).
template <typename Release>
__attribute__((always_inline)) inline void publish_if_waited(ThreadState& self,
                                                             const HeldLock& held,
                                                             const Release& real_release,
                                                             bool made_wait) {
  if constexpr (requires { real_release.owner_word(); })
    if (held.lock_slot &&
        (made_wait || held.signalled_slot != 0 || (!held.stamped && real_release.contended())) &&
        real_release.owner_word())
      publish_holder(*held.lock_slot, self, held_acquire_site(self, held));
}

template <typename Release>
__attribute__((noinline, optimize("no-omit-frame-pointer"))) int release_slow(
    ThreadState* self, const void* lock, uintptr_t site, Release real_release,
    format::Operation default_operation) {
  if (self == nullptr) self = current_thread_slow();  // the fast path read only the TLS pointer
  if (self) pause_point(*self);
  bool made_wait = false;
  uint64_t end_ticks = 0;
  uint32_t found = kMaxHeldLocks;  // the hold released, when the thread holds the lock
  if (self)
    for (uint32_t i = self->held_depth; i-- > 0;)
      if (self->held[i].lock == lock) {
        if (self->held[i].signalled_slot) stamp_release_after_signal(self->held[i]);
        made_wait = self->held[i].stamped && hold_made_wait(self->held[i]);
        if (made_wait) note_release_with_waiters(*self, self->held[i], site);
        publish_if_waited(*self, self->held[i], real_release, made_wait);
        end_ticks = release_end_ticks(self->held[i], made_wait, real_release);
        found = i;
        break;
      }
  const int result = real_release();
  if (self == nullptr) return result;
  const ErrnoGuard keep_errno;  // the real release's
  // A hold released out of order (another taken since is still held: memcached lets go of an LRU
  // lock before the item lock it took under it) at a site the caches know: counted as
  // release_innermost counts the innermost, without the slow path's lookup.
  if (result == 0 && found != kMaxHeldLocks && found + 1 < self->held_depth &&
      !g_runtime.trace.enabled && self->held[found].epoch == own_epoch(*self)) {
    if (SiteStats* stats = known_release_entry(*self, self->held[found], lock, site)) {
      HeldLock held = take_held(*self, found);
      const bool timed = held.weight != 0 || made_wait;
      const uint64_t ticks = timed ? finish_timed_hold(*self, held, made_wait, site, end_ticks) : 0;
      ++stats->count;
      ++self->releases;
      if (ticks) snapshot_if_due(*self);
      return result;
    }
  }
  sink().release(*self, lock, site, result, default_operation, made_wait, end_ticks);
  return result;
}

// Any other release of the thread's innermost hold: its release entry comes from the site cache
// when the acquire site's last release was elsewhere, and a hold that needs more than counting (see
// needs_release_work) has a condvar signalled under it stamped and whether it made a thread wait
// read before the real unlock, and is timed after it.
template <typename Release>
__attribute__((noinline, optimize("no-omit-frame-pointer"))) int release_innermost(
    ThreadState* self, const void* lock, uintptr_t site, Release real_release,
    format::Operation default_operation) {
  pause_point(*self);
  HeldLock& top = self->held[self->held_depth - 1];
  // Trace mode: a copy of the site's trace-tagged entry, and the event after the same steps.
  SiteCacheEntry traced_entry;
  const SiteCacheEntry* traced = nullptr;
  SiteStats* stats = nullptr;
  if (g_runtime.trace.enabled) {
    if (top.epoch == own_epoch(*self) &&
        copy_traced_site(*self, lock, site, static_cast<format::Operation>(top.release_operation),
                         traced_entry))
      traced = &traced_entry;
    if (traced == nullptr) return release_slow(self, lock, site, real_release, default_operation);
  } else {
    stats = known_release_entry(*self, top, lock, site);
    if (stats == nullptr) return release_slow(self, lock, site, real_release, default_operation);
  }
  if (top.signalled_slot != 0) stamp_release_after_signal(top);
  // Only a hold whose start was read can be timed: other releases skip the check.
  const bool made_wait = top.stamped && hold_made_wait(top);
  if (made_wait) note_release_with_waiters(*self, top, site);
  publish_if_waited(*self, top, real_release, made_wait);
  const uint64_t end_ticks = release_end_ticks(top, made_wait, real_release);
  const int result = real_release();
  if (__builtin_expect(result != 0, 0)) {
    const ErrnoGuard keep_errno;  // the real release's
    sink().release(*self, lock, site, result, default_operation, made_wait, end_ticks);
    return result;
  }
  if (traced)
    record_traced_release(*self, top, *traced, made_wait, end_ticks);
  else if (count_release(*self, top, *stats, made_wait, site, end_ticks) != 0)
    snapshot_if_due(*self);
  return 0;
}

// What release_innermost would do beyond counting: time a hold (sampled, exact, or stamped and
// made a thread wait), stamp a signalled condvar. A stamped hold of a lock once waited for that
// leaves no thread waiting (the common case on a contended lock) has nothing to do: it is counted
// inline, as a hold never stamped.
inline bool release_has_work(const HeldLock& held) {
  return (held.weight | held.signalled_slot) != 0 || (held.stamped && hold_made_wait(held));
}

// `default_operation` counts a release of a lock this thread was not seen to hold (an rwlock's
// side is otherwise taken from how it was acquired).
//
// The common case: the release of the thread's innermost hold, at the site its acquire site's
// locks were last released at, with nothing to time. It is counted just before the real unlock,
// which is then a tail call: three thread-local increments inside the critical section instead of
// a stack frame around the real call. The real unlock cannot fail there: this thread acquired the
// lock (the held stack says so) and holds it still.
template <typename Release>
__attribute__((always_inline)) inline int release(
    const void* lock, uintptr_t site, Release real_release,
    format::Operation default_operation = format::Operation::kUnlock) {
  ThreadState* self = tls_thread;
  if (__builtin_expect(
          self == nullptr || self->held_depth == 0 || self->held[self->held_depth - 1].lock != lock,
          0))
    return release_slow(self, lock, site, real_release, default_operation);
  const HeldLock& top = self->held[self->held_depth - 1];
  // A held lock's entry is set whenever its epoch is current.
  if (__builtin_expect(top.epoch != self->epoch, 0))
    return release_innermost(self, lock, site, real_release, default_operation);
  SiteStats* stats = top.entry->release_stats;
  if (__builtin_expect(stats == nullptr || stats->key.site != site, 0) ||
      __builtin_expect(release_has_work(top), 0) ||
      __builtin_expect(unstamped_and_contended(top, real_release), 0))
    return release_innermost(self, lock, site, real_release, default_operation);
  --self->held_depth;
  ++stats->count;
  ++self->releases;
  return real_release();
}

}  // namespace lockscope::runtime
