// The executable address ranges of the loaded modules (PT_LOAD segments with PF_X, the vDSO's
// included), for the stack walker's "is this a return address?" check.
//
// refresh() copies them from dl_iterate_phdr — at start-up, and again whenever the program may have
// loaded or unloaded code — and is never called on a capture path: dl_iterate_phdr takes the
// loader's lock. contains() is what captures call: no lock, no allocation, no system call, safe in
// a signal handler and in a thread-exit destructor.
//
// Two tables, the published one and the one the next refresh writes, so a signal handler that
// interrupts a refresh on its own thread reads a complete table. Each table carries a sequence
// number (odd while written): a reader that was overtaken by two refreshes in a row sees it change,
// retries a few times and then answers "no" (the walk stops; it never reads memory on a "yes").
//
// Addresses of code that is not in any module (JIT code, a trampoline written at run time) are
// never executable here, and a module unloaded since the last refresh still is: the answer guards
// the walk against data that is not code, not against stale code.
#pragma once

#include <atomic>
#include <cstdint>

#include "runtime/internal_lock.h"

struct dl_phdr_info;

namespace lockscope::runtime {

class ExecutableRanges {
 public:
  static constexpr uint32_t kMaxRanges = 1024;

  // Re-reads the loaded modules. Serialised by its own lock; the caller must be marked inside
  // lockscope (or be start-up). False when some ranges did not fit (the first kMaxRanges are kept).
  bool refresh();
  bool contains(uintptr_t address) const;
  uint32_t range_count() const;
  // The executable range of the module that defines __libc_start_main: libc's frames keep no frame
  // pointer on Debian, so a frame-pointer chain that reaches them has reached its end. {0, 0} when
  // libc was not found.
  uintptr_t libc_begin() const { return libc_begin_.load(std::memory_order_relaxed); }
  uintptr_t libc_end() const { return libc_end_.load(std::memory_order_relaxed); }

 private:
  struct Table {
    std::atomic<uint32_t> sequence{0};
    std::atomic<uint32_t> count{0};
    // Sorted by begin, not overlapping; atomics only so that a torn read is not undefined
    // behaviour (relaxed loads compile to plain moves).
    std::atomic<uintptr_t> begin[kMaxRanges];
    std::atomic<uintptr_t> end[kMaxRanges];
  };
  struct Collected {
    uintptr_t begin[kMaxRanges] = {};
    uintptr_t end[kMaxRanges] = {};
    uint32_t count = 0;
    bool overflowed = false;
  };
  static int add_module(::dl_phdr_info* info, size_t size, void* data);

  Table tables_[2];
  std::atomic<uint32_t> published_{0};  // index into tables_
  std::atomic<uintptr_t> libc_begin_{0};
  std::atomic<uintptr_t> libc_end_{0};
  Collected collected_;  // written only under refresh_lock_
  InternalLock refresh_lock_;
};

// The process's table, filled by init_stack_capture() (stack_capture.h).
ExecutableRanges& executable_ranges();

}  // namespace lockscope::runtime
