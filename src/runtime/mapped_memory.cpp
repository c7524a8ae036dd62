#include "runtime/mapped_memory.h"

#include <sys/auxv.h>
#include <sys/mman.h>

#include <cstdint>

#include "runtime/errno_guard.h"

namespace lockscope::runtime {

namespace {
constexpr int kPopulateWrite = 23;  // MADV_POPULATE_WRITE, not in every libc's headers
}  // namespace

void populate_window(void* window, const void* region_end) {
  const ErrnoGuard keep_errno;
  const auto start = reinterpret_cast<uintptr_t>(window);
  const auto end = reinterpret_cast<uintptr_t>(region_end);
  if (end > start)
    madvise(window, end - start < kPopulateWindowBytes ? end - start : kPopulateWindowBytes,
            kPopulateWrite);
}

void* map_memory(size_t bytes, bool huge_pages, Fill fill) {
  const ErrnoGuard keep_errno;
  constexpr int kFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  void* result = nullptr;
  if (!huge_pages || bytes < kHugePageBytes) {
    void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, kFlags, -1, 0);
    result = memory == MAP_FAILED ? nullptr : memory;
    // A refusal (an old kernel, a memory limit) leaves the pages to come on first touch.
    if (result && bytes >= kPopulateBytes) {
      if (fill == Fill::kInOrder) populate_window(result, static_cast<char*>(result) + bytes);
      if (fill == Fill::kAtRandom) madvise(result, bytes, kPopulateWrite);
    }
  } else {
    // Over-map by one huge page and give back what lies outside the aligned region.
    const size_t mapped = bytes + kHugePageBytes;
    void* memory = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, kFlags, -1, 0);
    if (memory != MAP_FAILED) {
      const auto start = reinterpret_cast<uintptr_t>(memory);
      const uintptr_t aligned = (start + kHugePageBytes - 1) & ~(uintptr_t{kHugePageBytes} - 1);
      const size_t page = getauxval(AT_PAGESZ) ? getauxval(AT_PAGESZ) : 4096;
      const uintptr_t end = (aligned + bytes + page - 1) & ~uintptr_t{page - 1};
      if (aligned > start) munmap(memory, aligned - start);
      if (start + mapped > end) munmap(reinterpret_cast<void*>(end), start + mapped - end);
      result = reinterpret_cast<void*>(aligned);
      madvise(result, bytes & ~(kHugePageBytes - 1), MADV_HUGEPAGE);
    }
  }
  return result;
}

}  // namespace lockscope::runtime
