#include "runtime/lock_table.h"

#include <sys/mman.h>

#include "common/profile_format.h"
#include "runtime/inside_lockscope.h"
#include "runtime/mapped_memory.h"

namespace lockscope::runtime {

uint32_t LockTable::insert(uintptr_t address) {
  InsideLockscope inside;  // a signal handler must not spin on the lock its own thread holds
  lock_.lock();
  uint32_t number = find(address);
  if (number == kNoSlot) {
    Index* index = index_.load(std::memory_order_relaxed);
    if ((!index || (slots_.size() + 1) * 2 > index->capacity) && !grow_index() &&
        (!index || slots_.size() + 2 > index->capacity)) {
      lock_.unlock();
      return kNoSlot;
    }
    index = index_.load(std::memory_order_relaxed);
    const size_t at = slots_.size();
    if (slots_.append(
            [&](LockSlot& fresh) { fresh.address.store(address, std::memory_order_relaxed); })) {
      const size_t mask = index->capacity - 1;
      size_t i = hash(address) & mask;
      while (index->numbers()[i].load(std::memory_order_relaxed) != 0) i = (i + 1) & mask;
      index->numbers()[i].store(static_cast<uint32_t>(at + 1), std::memory_order_release);
      number = static_cast<uint32_t>(at);
    }
  }
  lock_.unlock();
  return number;
}

bool LockTable::grow_index() {
  Index* old = index_.load(std::memory_order_relaxed);
  const size_t capacity = old ? old->capacity * 2 : 4096;
  if (capacity > (size_t{1} << 32)) return false;
  void* memory = map_memory(sizeof(Index) + capacity * sizeof(uint32_t), false, Fill::kAtRandom);
  if (memory == nullptr) return false;
  auto* index = static_cast<Index*>(memory);
  index->capacity = capacity;
  const size_t mask = capacity - 1;
  for (size_t n = 0; n < slots_.size(); ++n) {
    size_t i = hash(slots_[n].address.load(std::memory_order_relaxed)) & mask;
    while (index->numbers()[i].load(std::memory_order_relaxed) != 0) i = (i + 1) & mask;
    index->numbers()[i].store(static_cast<uint32_t>(n + 1), std::memory_order_relaxed);
  }
  index_.store(index, std::memory_order_release);  // the old one stays mapped: see the header
  return true;
}

void LockTable::retire_generation(uint32_t number) {
  LockSlot& s = slots_[number];
  InsideLockscope inside;
  lock_.lock();
  const RetiredLock finished{
      s.address.load(std::memory_order_relaxed),    number,
      s.generation.load(std::memory_order_relaxed), s.kind.load(std::memory_order_relaxed),
      s.flags.load(std::memory_order_relaxed),      s.init_site.load(std::memory_order_relaxed),
      s.primitive.load(std::memory_order_relaxed),  s.capacity.load(std::memory_order_relaxed)};
  if (!retired_.append([&](RetiredLock& into) { into = finished; }))
    retired_dropped_.fetch_add(1, std::memory_order_relaxed);
  lock_.unlock();
  s.generation.fetch_add(1, std::memory_order_relaxed);
  s.kind.store(0, std::memory_order_relaxed);
  s.flags.store(0, std::memory_order_relaxed);
  s.init_site.store(0, std::memory_order_relaxed);
  s.holder_published_ticks.store(0, std::memory_order_relaxed);
  s.last_owner.store(0, std::memory_order_relaxed);
  s.used.store(false, std::memory_order_relaxed);
  s.primitive.store(0, std::memory_order_relaxed);
  s.capacity.store(0, std::memory_order_relaxed);
  s.arrivals.store(0, std::memory_order_relaxed);
  s.last_signal_ticks.store(0, std::memory_order_relaxed);
  // `waiters` is left alone: it counts threads inside calls, which end after the retire.
  s.waited_on.store(false, std::memory_order_relaxed);
}

void LockTable::reset_after_fork() {
  lock_.reset();
  for (size_t i = 0; i < slots_.size(); ++i) {
    LockSlot& s = slots_[i];
    s.holder_published_ticks.store(0, std::memory_order_relaxed);
    s.last_owner.store(0, std::memory_order_relaxed);
    s.waiters.store(0, std::memory_order_relaxed);  // the parent's other threads are not here
    // An owner death the parent saw (EOWNERDEAD) is in the parent's profile, not the child's.
    s.flags.fetch_and(~uint32_t{format::kLockOwnerDied}, std::memory_order_relaxed);
    // A lock's holder site and releaser CPU were the parent's (barriers and condvars keep theirs:
    // the same fields are their arrivals and signal times).
    const auto primitive =
        static_cast<format::Primitive>(s.primitive.load(std::memory_order_relaxed));
    if (primitive == format::Primitive::kMutex || primitive == format::Primitive::kRwLock ||
        primitive == format::Primitive::kSpinLock) {
      holder_site(s).store(0, std::memory_order_relaxed);
      releaser_cpu(s).store(0, std::memory_order_relaxed);
    }
  }
  retired_.reset();
  retired_dropped_.store(0, std::memory_order_relaxed);
}

}  // namespace lockscope::runtime
