// The distinct call stacks of one recording table (a thread's, or the process-wide merge): each
// sequence of return addresses is kept once and numbered from 1 in insertion order (0: none).
// Stored in append-only arrays, so another thread (the profile writer) may read stacks
// [1, size()] while the owner adds new ones; the hash index is the owner's alone.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/profile_format.h"
#include "runtime/chunked_array.h"

namespace lockscope::runtime {

class StackStore {
 public:
  StackStore() = default;
  StackStore(const StackStore&) = delete;
  StackStore& operator=(const StackStore&) = delete;
  ~StackStore() { reset(); }

  // The number of the stack `frames[0..depth)`, added if new; 0 when depth is 0 or the kernel
  // refuses memory.
  uint32_t intern(const uintptr_t* frames, uint32_t depth);
  size_t size() const { return stacks_.size(); }
  // Stack `number` (1..size()): its depth, and frame i (0: innermost).
  uint32_t depth(uint32_t number) const { return stacks_[number - 1].depth; }
  uintptr_t frame(uint32_t number, uint32_t i) const {
    return frames_[stacks_[number - 1].first + i];
  }
  // Copies stack `number` into `out` (room for kMaxDepth frames); returns its depth.
  uint32_t copy(uint32_t number, uintptr_t* out) const;
  // Whether stack `number` (1..size()) is frames[0..depth).
  bool matches(uint32_t number, const uintptr_t* frames, uint32_t depth) const {
    return same(stacks_[number - 1], frames, depth);
  }
  static uint64_t hash(const uintptr_t* frames, uint32_t depth);
  static constexpr uint32_t kMaxDepth = format::kMaxStackFrames;  // what a profile's readers take

  void reset();    // empty, memory given back
  void abandon();  // forget the memory without unmapping it (a forked child's copy)
  // Empties a small store (its stacks and frames in their first chunks, its index the first size)
  // keeping its memory, zeroed in place: a short-lived thread's, for the next thread of its slot
  // (mapping and unmapping per thread cost more than the thread). False, and nothing changed,
  // when it is larger.
  bool clear_if_small();

 private:
  struct Stack {
    uint64_t hash;
    uint32_t first;  // index of its innermost frame in frames_
    uint32_t depth;
  };
  bool same(const Stack& stack, const uintptr_t* frames, uint32_t depth) const;
  bool grow_index();
  static constexpr size_t kFirstIndex = 256;  // the index's first size

  ChunkedArray<Stack, 8> stacks_;
  ChunkedArray<uintptr_t, 10> frames_;
  uint32_t* index_ = nullptr;  // stack number, 0 = empty; open addressing
  size_t index_capacity_ = 0;  // a power of two, at least twice size()
};

}  // namespace lockscope::runtime
