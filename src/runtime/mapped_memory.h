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
#pragma once

#include <cstddef>

namespace lockscope::runtime {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// `bytes` of zeroed, read-write, private memory (MAP_NORESERVE: pages come on first touch), on
// huge pages when `huge_pages` and large enough; nullptr when the kernel refuses it. Given back
// with munmap(pointer, bytes). Keeps errno.
void* map_memory(size_t bytes, bool huge_pages);

}  // namespace lockscope::runtime
