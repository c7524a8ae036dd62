// Append-only storage whose elements never move: chunk k holds (1 << kFirstLog2) << k elements and
// is mapped (map_memory: zero-filled) only when its first element is appended. `kDense`: its
// elements are written in order, so a large chunk is populated a window at a time as appends reach
// it (map_memory's Fill::kInOrder); an array indexed sparsely (by lock slot, by thread slot) is
// not.
//
// Why: the hot path keeps raw pointers into the recording tables (a thread's site cache, its held
// locks). A table that grows by rehashing would invalidate them; this one grows by adding chunks,
// so a pointer stays valid until reset(). Address space grows with use (at most twice what is
// used), so nothing large is reserved at start-up and a `ulimit -v` program still gets profiled.
//
// Appends need one writer at a time (the owning thread, or a caller holding a lock). Other threads
// may read elements [0, size()) concurrently: the chunk pointer and the size are published with
// release stores after the memory is mapped and the element filled in by the appender.
#pragma once

#include <sys/mman.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "runtime/mapped_memory.h"

namespace lockscope::runtime {

template <typename T, unsigned kFirstLog2, bool kDense = true>
class ChunkedArray {
 public:
  static constexpr unsigned kChunks = 40;

  // A new element at index size(), zero-filled, then given to `fill` before readers can see it;
  // nullptr when the kernel refuses the memory.
  template <typename Fill>
  T* append(Fill fill) {
    const size_t index = size_.load(std::memory_order_relaxed);
    T* element = slot(index);
    if (!element) return nullptr;
    if constexpr (kDense) populate_next_window(index);
    fill(*element);
    size_.store(index + 1, std::memory_order_release);
    return element;
  }
  // Element `index`, mapping its chunk if needed (index may be >= size(): a stack that shrinks and
  // grows again reuses its slots); nullptr when the kernel refuses the memory.
  T* slot(size_t index) {
    unsigned chunk;
    size_t offset;
    locate(index, chunk, offset);
    if (chunk >= kChunks) return nullptr;
    T* base = chunks_[chunk].load(std::memory_order_acquire);
    if (!base) {
      void* memory =
          map_memory(chunk_bytes(chunk), huge_pages_, kDense ? Fill::kInOrder : Fill::kOnTouch);
      if (memory == nullptr) return nullptr;
      base = static_cast<T*>(memory);
      chunks_[chunk].store(base, std::memory_order_release);
    }
    return base + offset;
  }
  // Hints the cache to load element `index` when its chunk is mapped; nothing otherwise.
  void prefetch(size_t index) const {
    unsigned chunk;
    size_t offset;
    locate(index, chunk, offset);
    if (chunk >= kChunks) return;
    if (T* base = chunks_[chunk].load(std::memory_order_acquire)) __builtin_prefetch(base + offset);
  }
  // Element i < size() (or any slot() already mapped).
  T& operator[](size_t index) const {
    unsigned chunk;
    size_t offset;
    locate(index, chunk, offset);
    return chunks_[chunk].load(std::memory_order_acquire)[offset];
  }
  size_t size() const { return size_.load(std::memory_order_acquire); }
  // Unmaps every chunk: the array is empty again and holds no memory.
  void reset() {
    for (unsigned k = 0; k < kChunks; ++k)
      if (T* base = chunks_[k].exchange(nullptr, std::memory_order_acq_rel))
        munmap(base, chunk_bytes(k));
    size_.store(0, std::memory_order_release);
  }
  // Whether every element is in the first chunk (clear_in_first_chunk would succeed).
  bool in_first_chunk() const { return size_.load(std::memory_order_relaxed) <= kFirst; }
  // Empties the array for reuse, keeping its memory, when everything is in the first chunk (zeroes
  // the used part); false otherwise (the caller resets instead).
  bool clear_in_first_chunk() {
    const size_t used = size_.load(std::memory_order_relaxed);
    if (used > kFirst) return false;
    if (T* base = chunks_[0].load(std::memory_order_relaxed))
      __builtin_memset(static_cast<void*>(base), 0, used * sizeof(T));
    size_.store(0, std::memory_order_release);
    return true;
  }
  // Chunks of 2 MiB or more on huge pages from now on (mapped_memory.h: never for a table that
  // grows inside the program's critical sections).
  void use_huge_pages() { huge_pages_ = true; }
  // Forgets the chunks without unmapping them (a forked child's copy of another owner's state).
  void abandon() {
    for (auto& chunk : chunks_) chunk.store(nullptr, std::memory_order_relaxed);
    size_.store(0, std::memory_order_relaxed);
  }

 private:
  // Element `index` was just mapped for an append: when it is the first of a chunk's next window
  // of kPopulateWindowBytes (map_memory populated the first), that window is populated.
  void populate_next_window(size_t index) {
    unsigned chunk;
    size_t offset;
    locate(index, chunk, offset);
    const size_t bytes = chunk_bytes(chunk);
    if (bytes <= kPopulateWindowBytes) return;
    const size_t window = offset * sizeof(T) / kPopulateWindowBytes;
    if (window == 0 || (offset - 1) * sizeof(T) / kPopulateWindowBytes == window) return;
    char* base = reinterpret_cast<char*>(chunks_[chunk].load(std::memory_order_relaxed));
    populate_window(base + window * kPopulateWindowBytes, base + bytes);
  }

  static constexpr size_t kFirst = size_t{1} << kFirstLog2;
  static size_t chunk_bytes(unsigned chunk) { return (kFirst << chunk) * sizeof(T); }
  // index + kFirst = kFirst * 2^chunk + offset, with offset < kFirst * 2^chunk.
  static void locate(size_t index, unsigned& chunk, size_t& offset) {
    const size_t shifted = index + kFirst;
    const unsigned top = 63u - static_cast<unsigned>(__builtin_clzll(shifted));
    chunk = top - kFirstLog2;
    offset = shifted - (size_t{1} << top);
  }

  std::atomic<T*> chunks_[kChunks] = {};
  std::atomic<size_t> size_{0};
  bool huge_pages_ = false;
};

}  // namespace lockscope::runtime
