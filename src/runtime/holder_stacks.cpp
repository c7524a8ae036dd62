#include "runtime/holder_stacks.h"

namespace lockscope::runtime {

uint32_t HolderStackTable::intern(const uintptr_t* frames, uint32_t depth, HolderStackHint* hints) {
  if (depth == 0) return 0;
  if (depth > StackStore::kMaxDepth) depth = StackStore::kMaxDepth;
  const uint64_t hash = StackStore::hash(frames, depth);
  HolderStackHint& hint = hints[hash % kHolderStackHints];
  if (hint.number != 0 && hint.hash == hash && hint.number <= stacks_.size() &&
      stacks_.matches(hint.number, frames, depth))
    return hint.number;
  if (!lock_.try_lock()) return 0;  // inside a critical section: never wait
  const uint32_t number = stacks_.intern(frames, depth);
  lock_.unlock();
  if (number != 0) hint = HolderStackHint{hash, number, 0};
  return number;
}

}  // namespace lockscope::runtime
