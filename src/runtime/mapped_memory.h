// Zero-filled memory straight from the kernel for the runtime's tables and buffers (the runtime
// may not use malloc: the program may be inside it, or may have replaced it).
//
// Why not a plain mmap: a fresh 4 KiB page costs its first touch a page fault, ~11 us on the
// reference guest (bench/overhead/RESULTS.md), while a 2 MiB transparent huge page costs ~0.3 ms,
// 0.16 us per 4 KiB of it. A table of a server's thousands of locks, or the buffers of a
// profile write, touches megabytes of fresh memory: on 4 KiB pages, page faults were most of a
// profile write's time. So a region of kHugePageBytes or more starts on a huge-page boundary and
// asks for huge pages (MADV_HUGEPAGE: honoured when transparent huge pages are `madvise` or
// `always`, ignored when `never`). Smaller regions stay on 4 KiB pages: a thread's small tables
// must not cost 2 MiB each (10,000 short-lived threads).
#pragma once

#include <cstddef>

namespace lockscope::runtime {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// `bytes` of zeroed, read-write, private memory (MAP_NORESERVE: pages come on first touch);
// nullptr when the kernel refuses it. Given back with munmap(pointer, bytes). Keeps errno.
void* map_memory(size_t bytes);

}  // namespace lockscope::runtime
