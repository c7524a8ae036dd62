// Hold times: which holds are timed (sampled per site at random gaps, or every one that made a
// thread wait) and how a timed hold is recorded at its release (recorder_bookkeeping.h).
#include "runtime/errno_guard.h"
#include "runtime/recorder.h"
#include "runtime/stack_budget.h"

namespace lockscope::runtime {

namespace {

// A gap between two hold samples of a site: 1 .. 2 x period - 1 acquisitions, uniformly, so
// `period` on average. Random, not every period-th: a program whose holds repeat with a period
// that divides the sampling's (a long hold every 32nd time, or every other) was sampled at the
// same phase every time; its estimate was off by 90x while its bound, from samples all alike,
// read a few percent. With random gaps every acquisition is as likely to be sampled as any
// other. (xorshift64*, one state per thread, seeded from the clock and the thread's id.)
uint32_t sampling_gap(ThreadState& self, uint32_t period) {
  if (period <= 1) return 1;
  uint64_t x = self.sample_random;
  if (x == 0) x = (g_runtime.clock.now() ^ (uint64_t{self.tid} << 32)) | 1;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  self.sample_random = x;
  const uint64_t draw = (x * 0x2545F4914F6CDD1Dull) >> 32;  // 32 random bits
  return 1 + static_cast<uint32_t>((draw * (2 * uint64_t{period} - 1)) >> 32);
}

}  // namespace

void start_sampled_hold(ThreadState& self, HeldLock& held, SiteStats& stats) {
  const uint32_t period = g_runtime.hold_sample_period;
  // A site's first `period` acquisitions are all timed, so a cold site is exact; after that 1 in
  // `period` on average, each sample standing for itself and the acquisitions that follow it
  // until the next (sampling_gap).
  if (stats.count <= period) {
    held.weight = 1;
  } else {
    const uint32_t gap = sampling_gap(self, period);
    held.weight = gap;
    stats.hold_countdown = gap - 1;
  }
  stamp_hold(held);
}

void stamp_release_after_signal(HeldLock& held) {
  signaller_release_ticks(g_runtime.locks.slot(held.signalled_slot - 1))
      .store(g_runtime.clock.now(), std::memory_order_release);
  held.signalled_slot = 0;
}

uint64_t finish_timed_hold(ThreadState& self, HeldLock& held, bool made_wait, uintptr_t site,
                           uint64_t end_ticks) {
  const uint64_t end = end_ticks != 0 ? end_ticks : g_runtime.clock.now();
  const ErrnoGuard keep_errno;  // the program's unlock returned; a refused mmap must not show
  if (held.entry == nullptr || held.epoch != own_epoch(self) || !held.stamped) return end;
  uint64_t weight = held.weight;
  if (made_wait) {
    // Timed exactly. A sample that turns out to be one leaves the sample, and the next
    // acquisition at the site is sampled in its place; a hold the previous sample stood for
    // leaves what that sample stands for (the next sample comes one acquisition later), so the
    // histogram's weights still add up to the holds.
    if (weight > 1) held.entry->hold_countdown = 0;
    if (weight == 0) ++held.entry->hold_countdown;
    weight = 1;
  }
  // A lock the thread holds again further out (a recursive mutex re-locked, a read lock taken
  // twice) is held for this hold's time by the outer hold, which counts it: this one adds none.
  // (Each level counted the whole: a mutex held 100 ms at 5 levels showed 503 ms, "exact".)
  const uint64_t hold_ns = held_further_out(self, held)
                               ? 0
                               : g_runtime.clock.to_ns(end - held.start_ticks + held.paused_ticks);
  InsideLockscope inside;
  // Hold time by the stack of its release: the one captured before the unlock, else one now
  // (within the budget).
  Runtime& rt = g_runtime;
  const bool stack_captured = rt.stack_depth != 0 && self.released_stack.number != 0 &&
                              self.released_stack.start_ticks == held.start_ticks;
  const bool stack_wanted = stack_captured || (rt.stack_depth != 0 &&
                                               stack_budget_allows(self, end, self.hold_stack_ticks,
                                                                   &rt.shared_stack_ticks));
  if (weight == 1 && !stack_wanted) {
    // An exact hold with no stack: recorded later, in a batch (SiteTable::defer_exact_hold).
    self.released_stack.number = 0;
    if (const uint32_t lost = self.sites.defer_exact_hold(*held.entry, hold_ns))
      rt.count(format::Counter::kDroppedSites, lost);
    return end;
  }
  SiteDetail* detail = self.sites.hold_detail(*held.entry);
  if (!detail) return end;
  self.sites.record_hold(*detail, hold_ns, weight);
  if (rt.stack_depth == 0) return end;
  uintptr_t frames[StackStore::kMaxDepth];
  uint32_t depth = 0;
  if (stack_captured) {
    depth = rt.holder_stacks.stacks().copy(self.released_stack.number, frames);
  } else if (stack_wanted) {
    // The capture's own start: a hold timed before its unlock ended before that unlock's futex
    // call, which the capture's budget must not be charged for.
    uint64_t now = end_ticks != 0 ? g_runtime.clock.now() : end;
    depth = capture_stack_at(self, site, frames, rt.stack_depth, rt.unwind_mode, now,
                             self.hold_stack_ticks, &rt.shared_stack_ticks);
  }
  self.released_stack.number = 0;
  uint32_t stack = 0;
  if (depth != 0) {
    // A stack needs the whole detail (the short form has the hold fields and owner changes only).
    detail = self.sites.detail(*held.entry);
    stack = detail ? self.sites.record_stack(detail->hold_stacks, frames, depth, weight,
                                             hold_ns * weight)
                   : 0;
    if (stack == 0) rt.count(format::Counter::kDroppedSites);
  }
  // A sample's row stands for the acquisitions after it too (SiteDetail::last_sample_stack); one
  // whose stack was not captured leaves no row to take them from.
  if (weight > 1 && detail && detail->full) {
    detail->last_sample_stack = stack;
    detail->last_sample_ns = hold_ns;
  }
  return end;
}

}  // namespace lockscope::runtime
