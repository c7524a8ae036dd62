#include "runtime/lock_order.h"

#include <sys/mman.h>

namespace lockscope::runtime {

uint64_t LockOrderTable::hash(const OrderEdge& edge) {
  uint64_t h = (uint64_t{edge.from_slot} << 32 | edge.to_slot) * 0x9E3779B97F4A7C15ull;
  h ^= (uint64_t{edge.from_generation} << 32 | edge.to_generation) + (h >> 29);
  h *= 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 31);
}

// Doubles the index (from 4,096 numbers) when half full, re-inserting every edge.
bool LockOrderTable::grow_index() {
  const size_t capacity = index_capacity_ ? index_capacity_ * 2 : 4096;
  void* memory = mmap(nullptr, capacity * sizeof(uint32_t), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return false;
  auto* index = static_cast<uint32_t*>(memory);
  for (size_t n = 0; n < edges_.size(); ++n) {
    size_t i = hash(edges_[n]) & (capacity - 1);
    while (index[i] != 0) i = (i + 1) & (capacity - 1);
    index[i] = static_cast<uint32_t>(n + 1);
  }
  if (index_) munmap(index_, index_capacity_ * sizeof(uint32_t));
  index_ = index;
  index_capacity_ = capacity;
  return true;
}

bool LockOrderTable::insert(const OrderEdge& edge) {
  lock_.lock();
  bool added = false;
  if ((edges_.size() + 1) * 2 <= index_capacity_ || grow_index()) {
    const size_t mask = index_capacity_ - 1;
    size_t i = hash(edge) & mask;
    for (; index_[i] != 0; i = (i + 1) & mask)
      if (same_locks(edges_[index_[i] - 1], edge)) break;
    if (index_[i] == 0) {
      const size_t number = edges_.size();
      if (edges_.append([&](OrderEdge& slot) { slot = edge; })) {
        index_[i] = static_cast<uint32_t>(number + 1);
        added = true;
      } else {
        ++dropped_;
      }
    }
  } else {
    ++dropped_;
  }
  lock_.unlock();
  return added;
}

void LockOrderTable::reset_after_fork() {
  lock_.reset();
  edges_.reset();
  if (index_) munmap(index_, index_capacity_ * sizeof(uint32_t));
  index_ = nullptr;
  index_capacity_ = 0;
  dropped_ = 0;
}

}  // namespace lockscope::runtime
