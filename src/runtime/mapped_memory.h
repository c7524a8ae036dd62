// Zero-filled memory straight from the kernel for the runtime's tables and buffers (the runtime
// may not use malloc: the program may be inside it, or may have replaced it).
//
// Huge pages, on request: a fresh 4 KiB page costs its first touch a page fault, ~11 us on the
// reference guest (bench/overhead/RESULTS.md), while a 2 MiB transparent huge page costs ~0.3 ms,
// 0.16 us per 4 KiB of it. A profile write touches megabytes of fresh memory (its buffers, the
// table it merges every thread's into): on 4 KiB pages, page faults were most of its time. So,
// when asked, a region of kHugePageBytes or more starts on a huge-page boundary and asks for huge
// pages (MADV_HUGEPAGE: honoured when transparent huge pages are `madvise` or `always`, ignored
// when `never`). Only off the program's critical sections: with the common `defrag=madvise`, a
// fault in such a region may compact memory for milliseconds, which a table growing inside an
// acquisition must not do. Smaller regions stay on 4 KiB pages.
//
// Populated regions, on request: a region its owner will write all of soon gets its 4 KiB pages
// in one call (MADV_POPULATE_WRITE, Linux 5.14; older kernels refuse it and the pages come on first
// touch): one entry into the kernel instead of a fault per page, ~6.7 us a page on the reference
// guest instead of ~12 (bench/overhead/RESULTS.md, 2026-12-04). Only from kPopulateBytes up, so
// that a thread that locks little maps little, and 2 MiB at a time for an array filled in order,
// so that no single call stalls the program for long.
#pragma once

#include <cstddef>

namespace lockscope::runtime {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;
inline constexpr size_t kPopulateBytes = size_t{128} << 10;
inline constexpr size_t kPopulateWindowBytes = size_t{2} << 20;

// How a region will be written, for map_memory to populate it or not.
enum class Fill {
  kOnTouch,   // sparsely (an array indexed by lock or thread slot): pages come on first touch
  kInOrder,   // from its start on (an arena, an append-only array): its first window populated;
              // the owner calls populate_window as it reaches each next one
  kAtRandom,  // all over, soon (a hash table's slots, rehashed into it): populated whole
};

// `bytes` of zeroed, read-write, private memory (MAP_NORESERVE: pages come on first touch), on
// huge pages when `huge_pages` and large enough, populated as `fill` says; nullptr when the kernel
// refuses it. Given back with munmap(pointer, bytes). Keeps errno.
void* map_memory(size_t bytes, bool huge_pages, Fill fill = Fill::kOnTouch);
// Populates the window of kPopulateWindowBytes (at most up to `region_end`) that begins at
// `window`, a multiple of kPopulateWindowBytes into a kInOrder region of kPopulateBytes or more.
// Keeps errno.
void populate_window(void* window, const void* region_end);

}  // namespace lockscope::runtime
