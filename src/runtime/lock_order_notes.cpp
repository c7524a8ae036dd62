// Lock order: the edge a blocking acquisition adds under a held lock, with the stack it was made
// from, once per edge (lock_order.h, recorder_bookkeeping.h).
#include "runtime/errno_guard.h"
#include "runtime/recorder.h"
#include "runtime/stack_capture.h"

namespace lockscope::runtime {

void note_order(ThreadState& self, const void* lock, uint32_t slot, uintptr_t site,
                format::Operation op, bool even_if_held) {
  const HeldLock& held = self.held[self.held_depth - 1];
  if (held.lock == lock) return;
  // A lock this thread holds already (deeper in its stack) is taken again without waiting: a
  // recursive mutex, a second read lock, an error-checking mutex's EDEADLK. No order there.
  if (!even_if_held)
    for (uint32_t i = 0; i + 1 < self.held_depth; ++i)
      if (self.held[i].lock == lock) return;
  InsideLockscope inside;
  Runtime& rt = runtime();
  const ErrnoGuard keep_errno;  // the lock table's insertion may mmap
  if (slot == LockTable::kNoSlot) slot = rt.locks.find_or_insert(reinterpret_cast<uintptr_t>(lock));
  if (slot != LockTable::kNoSlot) {
    const bool entry_valid = held.entry != nullptr && held.epoch == own_epoch(self);
    OrderEdge edge{};
    edge.from_slot = held.slot;
    edge.from_generation =
        entry_valid ? held.entry->key.generation
                    : rt.locks.slot(held.slot).generation.load(std::memory_order_relaxed);
    edge.from_site = entry_valid ? held.entry->key.site : 0;
    edge.to_slot = slot;
    edge.to_generation = rt.locks.slot(slot).generation.load(std::memory_order_relaxed);
    edge.to_site = site;
    edge.tid = self.tid;
    edge.to_operation = static_cast<uint16_t>(op);
    edge.from_operation = entry_valid ? held.entry->key.operation : 0;
    // A new edge keeps the stack it was made from (once per edge: within the capture budget).
    if (!rt.order.contains(edge)) {
      uint64_t now = rt.clock.now();
      const uint32_t depth =
          rt.stack_depth < OrderEdge::kMaxStackDepth ? rt.stack_depth : OrderEdge::kMaxStackDepth;
      // Walked from code without frame pointers (the interposer's inline fast path, this
      // function): unwind tables unless frame pointers alone were asked for. Once per edge.
      const uint8_t mode = rt.unwind_mode == static_cast<uint8_t>(UnwindMode::kFramePointer)
                               ? rt.unwind_mode
                               : static_cast<uint8_t>(UnwindMode::kDwarf);
      if (depth != 0)
        edge.stack_depth = capture_stack_at(self, site, edge.stack, depth, mode, now,
                                            self.stack_ticks, &rt.shared_stack_ticks);
      rt.order.insert(edge);
    }
  }
}

void note_order_cached(ThreadState& self, const SiteCacheEntry& cached) {
  HeldLock& outer = self.held[self.held_depth - 1];
  const bool outer_valid = outer.entry != nullptr && outer.epoch == own_epoch(self);
  // Nearly every edge is known already: a server's worker takes a few inner locks in turn under
  // each of its thousands of item locks, and the acquire site's memo (order_to) holds only the
  // last. Looked up by the two locks' identities as their entries name them (the lines the
  // acquisition just read), without note_order's reads of both locks' slots (lines that other
  // threads write) or its whole edge (~200 bytes, zeroed); what is unknown goes on there. The
  // entries' generations are the locks' own: a valid cache entry's lock changed generation in no
  // thread since it was filled (identity epoch).
  if (outer_valid && outer.lock != cached.lock &&
      g_runtime.order.contains(OrderLocks{outer.slot, outer.entry->key.generation,
                                          cached.slot_index, cached.stats->key.generation})) {
    outer.entry->order_to = cached.number;
    return;
  }
  note_order(self, cached.lock, cached.slot_index, cached.site,
             static_cast<format::Operation>(cached.operation));
  if (outer_valid) outer.entry->order_to = cached.number;
}

}  // namespace lockscope::runtime
