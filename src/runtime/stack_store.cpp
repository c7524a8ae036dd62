#include "runtime/stack_store.h"

#include <sys/mman.h>

#include <cstring>

#include "runtime/mapped_memory.h"

namespace lockscope::runtime {

uint64_t StackStore::hash(const uintptr_t* frames, uint32_t depth) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ depth;
  for (uint32_t i = 0; i < depth; ++i) {
    h ^= frames[i];
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;
  }
  return h;
}

bool StackStore::same(const Stack& stack, const uintptr_t* frames, uint32_t depth) const {
  if (stack.depth != depth) return false;
  for (uint32_t i = 0; i < depth; ++i)
    if (frames_[stack.first + i] != frames[i]) return false;
  return true;
}

bool StackStore::grow_index() {
  const size_t capacity = index_capacity_ ? index_capacity_ * 2 : kFirstIndex;
  void* memory = map_memory(capacity * sizeof(uint32_t), false, Fill::kAtRandom);
  if (memory == nullptr) return false;
  auto* index = static_cast<uint32_t*>(memory);
  for (size_t n = 0; n < stacks_.size(); ++n) {
    size_t i = stacks_[n].hash & (capacity - 1);
    while (index[i] != 0) i = (i + 1) & (capacity - 1);
    index[i] = static_cast<uint32_t>(n + 1);
  }
  if (index_) munmap(index_, index_capacity_ * sizeof(uint32_t));
  index_ = index;
  index_capacity_ = capacity;
  return true;
}

uint32_t StackStore::intern(const uintptr_t* frames, uint32_t depth) {
  if (depth == 0) return 0;
  if (depth > kMaxDepth) depth = kMaxDepth;
  if ((stacks_.size() + 1) * 2 > index_capacity_ && !grow_index() &&
      stacks_.size() + 1 >= index_capacity_)
    return 0;
  const uint64_t h = hash(frames, depth);
  const size_t mask = index_capacity_ - 1;
  size_t i = h & mask;
  for (; index_[i] != 0; i = (i + 1) & mask) {
    const Stack& stack = stacks_[index_[i] - 1];
    if (stack.hash == h && same(stack, frames, depth)) return index_[i];
  }
  const size_t first = frames_.size();
  for (uint32_t f = 0; f < depth; ++f)
    if (!frames_.append([&](uintptr_t& slot) { slot = frames[f]; })) return 0;
  const size_t number = stacks_.size() + 1;
  if (!stacks_.append([&](Stack& stack) { stack = Stack{h, static_cast<uint32_t>(first), depth}; }))
    return 0;
  index_[i] = static_cast<uint32_t>(number);
  return static_cast<uint32_t>(number);
}

uint32_t StackStore::copy(uint32_t number, uintptr_t* out) const {
  const Stack& stack = stacks_[number - 1];
  for (uint32_t i = 0; i < stack.depth; ++i) out[i] = frames_[stack.first + i];
  return stack.depth;
}

void StackStore::reset() {
  stacks_.reset();
  frames_.reset();
  if (index_) munmap(index_, index_capacity_ * sizeof(uint32_t));
  index_ = nullptr;
  index_capacity_ = 0;
}

bool StackStore::clear_if_small() {
  if (!stacks_.in_first_chunk() || !frames_.in_first_chunk() || index_capacity_ > kFirstIndex)
    return false;
  stacks_.clear_in_first_chunk();
  frames_.clear_in_first_chunk();
  if (index_) std::memset(index_, 0, index_capacity_ * sizeof(uint32_t));
  return true;
}

void StackStore::abandon() {
  stacks_.abandon();
  frames_.abandon();
  index_ = nullptr;
  index_capacity_ = 0;
}

}  // namespace lockscope::runtime
