#include "runtime/lock_table.h"

#include <sys/mman.h>

namespace lockscope::runtime {

bool LockTable::create(size_t capacity, size_t retired_capacity) {
  const size_t slot_bytes = capacity * sizeof(LockSlot);
  const size_t retired_bytes = retired_capacity * sizeof(RetiredLock);
  const size_t bytes = slot_bytes + retired_bytes + capacity * sizeof(uint32_t);
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) return false;
  // Zero-filled pages are valid atomics in the initial state.
  slots_ = static_cast<LockSlot*>(memory);
  capacity_ = capacity;
  retired_ = reinterpret_cast<RetiredLock*>(static_cast<char*>(memory) + slot_bytes);
  retired_capacity_ = retired_capacity;
  used_list_ = reinterpret_cast<uint32_t*>(static_cast<char*>(memory) + slot_bytes + retired_bytes);
  return true;
}

void LockTable::retire_generation(uint32_t index) {
  LockSlot& s = slots_[index];
  const size_t at = retired_used_.fetch_add(1, std::memory_order_acq_rel);
  if (at < retired_capacity_) {
    retired_[at] = RetiredLock{s.address.load(std::memory_order_relaxed),
                               index,
                               s.generation.load(std::memory_order_relaxed),
                               s.kind.load(std::memory_order_relaxed),
                               s.flags.load(std::memory_order_relaxed),
                               s.init_site.load(std::memory_order_relaxed),
                               s.owner_changes.load(std::memory_order_relaxed),
                               s.primitive.load(std::memory_order_relaxed),
                               s.capacity.load(std::memory_order_relaxed)};
  }
  s.generation.fetch_add(1, std::memory_order_relaxed);
  s.kind.store(0, std::memory_order_relaxed);
  s.flags.store(0, std::memory_order_relaxed);
  s.init_site.store(0, std::memory_order_relaxed);
  s.owner_changes.store(0, std::memory_order_relaxed);
  s.last_owner.store(0, std::memory_order_relaxed);
  s.used.store(false, std::memory_order_relaxed);
  s.primitive.store(0, std::memory_order_relaxed);
  s.capacity.store(0, std::memory_order_relaxed);
  s.arrivals.store(0, std::memory_order_relaxed);
  s.waiters.store(0, std::memory_order_relaxed);
}

uint64_t LockTable::retired_dropped() const {
  const size_t n = retired_used_.load(std::memory_order_acquire);
  return n > retired_capacity_ ? n - retired_capacity_ : 0;
}

void LockTable::reset_counts_after_fork() {
  const size_t used = used_count();
  for (size_t i = 0; i < used; ++i) {
    LockSlot& s = slots_[used_list_[i]];
    s.owner_changes.store(0, std::memory_order_relaxed);
    s.last_owner.store(0, std::memory_order_relaxed);
  }
  retired_used_.store(0, std::memory_order_relaxed);
}

}  // namespace lockscope::runtime
