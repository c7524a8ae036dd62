#include "runtime/bump_arena.h"

#include <sys/mman.h>

#include <cstdint>

#include "runtime/mapped_memory.h"

namespace lockscope::runtime {

void* BumpArena::allocate(size_t bytes, size_t alignment) {
  bytes = (bytes + 15) & ~size_t{15};
  // The padding before an aligned block (a new chunk's first block needs at most as much).
  const auto padding = [&] {
    return (alignment - reinterpret_cast<uintptr_t>(next_) % alignment) % alignment;
  };
  if (!last_ || static_cast<size_t>(end_ - next_) < bytes + padding()) {
    const size_t header = (sizeof(Chunk) + 15) & ~size_t{15};
    size_t chunk_bytes = last_chunk_bytes_ == 0 ? kChunkBytes : last_chunk_bytes_ * 2;
    if (chunk_bytes > kLargestChunkBytes) chunk_bytes = kLargestChunkBytes;
    // The header, then the padding to the block's alignment (a chunk starts page-aligned).
    const size_t needed = bytes + ((header + alignment - 1) & ~(alignment - 1));
    const size_t size = needed > chunk_bytes ? needed : chunk_bytes;
    void* memory = map_memory(size, huge_pages_, Fill::kInOrder);
    if (memory == nullptr) return nullptr;
    last_chunk_bytes_ = chunk_bytes;
    auto* chunk = static_cast<Chunk*>(memory);
    chunk->previous = last_;
    chunk->size = size;
    last_ = chunk;
    next_ = static_cast<char*>(memory) + header;
    end_ = static_cast<char*>(memory) + size;
  }
  next_ += padding();
  void* result = next_;
  next_ += bytes;
  return result;
}

bool BumpArena::rewind() {
  if (!last_) return true;
  if (last_->previous) return false;
  char* start = reinterpret_cast<char*>(last_) + ((sizeof(Chunk) + 15) & ~size_t{15});
  __builtin_memset(start, 0, static_cast<size_t>(next_ - start));
  next_ = start;
  return true;
}

void BumpArena::reset() {
  for (Chunk* chunk = last_; chunk;) {
    Chunk* previous = chunk->previous;
    munmap(chunk, chunk->size);
    chunk = previous;
  }
  last_ = nullptr;
  next_ = end_ = nullptr;
  last_chunk_bytes_ = 0;
}

}  // namespace lockscope::runtime
