// The threads waiting for a lock (LockSlot::waiters, waited_on) and a release that leaves one
// waiting: what it publishes for the next owner before its real unlock (recorder_bookkeeping.h).
#include <sched.h>

#include "runtime/errno_guard.h"
#include "runtime/recorder.h"

namespace lockscope::runtime {

LockSlot* begin_lock_wait(const void* lock, LockSlot* known) {
  if (known == nullptr) {
    InsideLockscope inside;
    Runtime& rt = runtime();
    const ErrnoGuard keep_errno;  // the table's insertion may mmap or futex-wait
    const uint32_t number = rt.locks.find_or_insert(reinterpret_cast<uintptr_t>(lock));
    if (number == LockTable::kNoSlot) return nullptr;
    known = &rt.locks.slot(number);
  }
  known->waiters.fetch_add(1, std::memory_order_relaxed);
  mark_waited_on(*known);
  return known;
}

void mark_waited_on(LockSlot& slot) {
  if (slot.waited_on.load(std::memory_order_relaxed) ||
      slot.waited_on.exchange(true, std::memory_order_relaxed))
    return;
  Runtime& rt = runtime();
  // Before the caller blocks on the lock: a thread that takes the lock after that sees both.
  rt.waited_epoch.fetch_add(1, std::memory_order_release);
  rt.count(format::Counter::kBlockingHoldsUntimed);
}

void refresh_stamp_early(SiteCacheEntry& cached) {
  cached.waited_epoch = runtime().waited_epoch.load(std::memory_order_acquire);
  if (!cached.stamp_early)
    cached.stamp_early = cached.slot->waited_on.load(std::memory_order_relaxed);
}

void note_blocking_release(ThreadState& self, const HeldLock& held, uintptr_t site) {
  Runtime& rt = g_runtime;
  LockSlot& slot = *held.lock_slot;
  // Before the program's unlock, which returns to it as is: nothing here may touch its errno (a
  // failed futex wait or mmap would).
  const ErrnoGuard keep_errno;
  const int cpu = sched_getcpu();
  uint32_t stack = 0;
  const HeldStack& own = self.held_stacks[&held - self.held];
  uintptr_t frames[StackStore::kMaxDepth];
  if (own.number != 0 && own.start_ticks == held.start_ticks && own.epoch == own_epoch(self) &&
      own.number <= self.sites.stacks().size()) {
    InsideLockscope inside;  // the table's lock is internal
    const uint32_t depth = self.sites.stacks().copy(own.number, frames);
    if (const uint32_t number = rt.holder_stacks.intern(frames, depth, self.holder_stack_hints))
      stack = number | kHolderStackAtAcquire;
  } else if (rt.stack_depth != 0) {
    uint64_t now = rt.clock.now();
    if (const uint32_t depth = capture_stack_at(self, site, frames, rt.stack_depth, rt.unwind_mode,
                                                now, self.stack_ticks)) {
      InsideLockscope inside;  // the table's lock is internal
      stack = rt.holder_stacks.intern(frames, depth, self.holder_stack_hints);
      if (stack != 0) self.released_stack = HeldStack{held.start_ticks, stack, 0};
    }
  }
  // Both are written, even as 0: a value left by an older release is never taken for this one's.
  holder_stack(slot).store(stack, std::memory_order_relaxed);
  releaser_cpu(slot).store(cpu >= 0 ? releaser_cpu_value(self.tid, static_cast<uint32_t>(cpu)) : 0,
                           std::memory_order_relaxed);
}

}  // namespace lockscope::runtime
