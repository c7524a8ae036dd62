// Memory for a recording table's optional parts (site details, histograms): bump allocation from
// chunks mapped on demand, all given back at once by reset(). Zero-filled, never moved, never freed
// one by one — a histogram that outgrows its block gets a bigger block and the old one stays
// behind, so the waste is bounded by what is in use. One writer at a time (the table's owner).
#pragma once

#include <cstddef>

namespace lockscope::runtime {

class BumpArena {
 public:
  // `bytes` of zeroed memory aligned to 16, or to `alignment` (a power of two, at most 4 KiB: a
  // block that must start a cache line); nullptr when the kernel refuses the memory.
  void* allocate(size_t bytes, size_t alignment = 16);
  // Unmaps every chunk.
  void reset();
  // Empties the arena for reuse, keeping (and zeroing the used part of) a single chunk; false when
  // it has several (the caller resets instead).
  bool rewind();
  // Chunks of 2 MiB on huge pages from now on (mapped_memory.h: off critical sections only).
  void use_huge_pages() { huge_pages_ = true; }
  // The next chunk, and all after it, of the largest size (an arena about to hold megabytes).
  void prefer_large_chunks() {
    if (last_chunk_bytes_ < kLargestChunkBytes / 2) last_chunk_bytes_ = kLargestChunkBytes / 2;
  }
  // Forgets the chunks without unmapping them (a forked child's copy of another owner's state).
  void abandon() {
    last_ = nullptr;
    last_chunk_bytes_ = 0;
  }

 private:
  struct Chunk {
    Chunk* previous;
    size_t size;  // bytes mapped, header included
  };
  // Chunks double from 64 KiB to 2 MiB, then stay that size: a small table maps little, a large
  // one few chunks. The size of the chunks mapped so far is 0 in an arena that was zero-filled
  // rather than constructed (a thread's table lives in mapped memory): the next is the first.
  static constexpr size_t kChunkBytes = 64 * 1024;
  static constexpr size_t kLargestChunkBytes = size_t{2} << 20;
  size_t last_chunk_bytes_ = 0;
  bool huge_pages_ = false;
  Chunk* last_ = nullptr;
  char* next_ = nullptr;
  char* end_ = nullptr;
};

}  // namespace lockscope::runtime
