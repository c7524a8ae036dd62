#include "runtime/lock_order.h"

#include <sys/mman.h>

#include "runtime/mapped_memory.h"

namespace lockscope::runtime {

uint64_t LockOrderTable::hash(const OrderLocks& edge) {
  uint64_t h = (uint64_t{edge.from_slot} << 32 | edge.to_slot) * 0x9E3779B97F4A7C15ull;
  h ^= (uint64_t{edge.from_generation} << 32 | edge.to_generation) + (h >> 29);
  h *= 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 31);
}

uint32_t LockOrderTable::find(Index* index, const OrderLocks& edge) const {
  if (index == nullptr) return 0;
  const size_t mask = index->capacity - 1;
  for (size_t i = hash(edge) & mask;; i = (i + 1) & mask) {
    const IndexSlot& slot = index->slots()[i];
    const uint32_t number = slot.number.load(std::memory_order_acquire);
    if (number == 0 || same_locks(slot, edge)) return number;
  }
}

void LockOrderTable::place(Index* index, const OrderLocks& edge, uint32_t number_plus_one) {
  const size_t mask = index->capacity - 1;
  size_t i = hash(edge) & mask;
  while (index->slots()[i].number.load(std::memory_order_relaxed) != 0) i = (i + 1) & mask;
  IndexSlot& slot = index->slots()[i];
  slot.from_slot = edge.from_slot;
  slot.from_generation = edge.from_generation;
  slot.to_slot = edge.to_slot;
  slot.to_generation = edge.to_generation;
  slot.number.store(number_plus_one, std::memory_order_release);
}

// A twice larger index (the first of 4,096 numbers) holding every edge, published for readers.
LockOrderTable::Index* LockOrderTable::grow_index() {
  Index* old = index_.load(std::memory_order_relaxed);
  const size_t capacity = old ? old->capacity * 2 : 4096;
  void* memory = map_memory(sizeof(Index) + capacity * sizeof(IndexSlot), false, Fill::kAtRandom);
  if (memory == nullptr) return nullptr;
  auto* index = static_cast<Index*>(memory);
  index->capacity = capacity;
  for (size_t n = 0; n < edges_.size(); ++n) place(index, edges_[n], static_cast<uint32_t>(n + 1));
  index_.store(index, std::memory_order_release);
  return index;
}

bool LockOrderTable::insert(const OrderEdge& edge) {
  // Known edges (nearly every call: the fast path's filter remembers one edge per acquire site)
  // are found without the lock.
  if (find(index_.load(std::memory_order_acquire), edge) != 0) return false;
  lock_.lock();
  bool added = false;
  Index* index = index_.load(std::memory_order_relaxed);
  if (index == nullptr || (edges_.size() + 1) * 2 > index->capacity) {
    if (Index* grown = grow_index())
      index = grown;
    else if (index == nullptr || edges_.size() + 1 >= index->capacity)
      index = nullptr;
  }
  if (index != nullptr && find(index, edge) == 0) {
    const size_t number = edges_.size();
    if (edges_.append([&](OrderEdge& slot) { slot = edge; })) {
      place(index, edge, static_cast<uint32_t>(number + 1));
      added = true;
    } else {
      dropped_.fetch_add(1, std::memory_order_relaxed);
    }
  } else if (index == nullptr) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
  }
  lock_.unlock();
  return added;
}

void LockOrderTable::reset_after_fork() {
  // Only the forking thread exists here; the indexes, never unmapped, are left unused.
  lock_.reset();
  // Not unmapped: a signal handler that forked may have interrupted this thread inside insert(),
  // which then goes on reading the edges; the parent's memory stays, unused.
  edges_.abandon();
  index_.store(nullptr, std::memory_order_relaxed);
  dropped_.store(0, std::memory_order_relaxed);
}

}  // namespace lockscope::runtime
