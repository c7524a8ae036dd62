// Memory for a recording table's optional parts (site details, histograms): bump allocation from
// chunks mapped on demand, all given back at once by reset(). Zero-filled, never moved, never freed
// one by one — a histogram that outgrows its block gets a bigger block and the old one stays
// behind, so the waste is bounded by what is in use. One writer at a time (the table's owner).
#pragma once

#include <cstddef>

namespace lockscope::runtime {

class BumpArena {
 public:
  // `bytes` of zeroed memory aligned to 16; nullptr when the kernel refuses the memory.
  void* allocate(size_t bytes);
  // Unmaps every chunk.
  void reset();
  // Empties the arena for reuse, keeping (and zeroing the used part of) a single chunk; false when
  // it has several (the caller resets instead).
  bool rewind();
  // Forgets the chunks without unmapping them (a forked child's copy of another owner's state).
  void abandon() { last_ = nullptr; }

 private:
  struct Chunk {
    Chunk* previous;
    size_t size;  // bytes mapped, header included
  };
  static constexpr size_t kChunkBytes = 64 * 1024;
  Chunk* last_ = nullptr;
  char* next_ = nullptr;
  char* end_ = nullptr;
};

}  // namespace lockscope::runtime
