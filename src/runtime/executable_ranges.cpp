#include "runtime/executable_ranges.h"

#include <dlfcn.h>
#include <link.h>

namespace lockscope::runtime {

int ExecutableRanges::add_module(dl_phdr_info* info, size_t, void* data) {
  auto& collected = *static_cast<Collected*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD || (segment.p_flags & PF_X) == 0 || segment.p_memsz == 0)
      continue;
    if (collected.count == kMaxRanges) {
      collected.overflowed = true;
      return 1;  // stops dl_iterate_phdr
    }
    // Insertion sort: a few hundred ranges at most, once per refresh.
    const uintptr_t begin = info->dlpi_addr + segment.p_vaddr;
    uint32_t at = collected.count++;
    while (at > 0 && collected.begin[at - 1] > begin) {
      collected.begin[at] = collected.begin[at - 1];
      collected.end[at] = collected.end[at - 1];
      --at;
    }
    collected.begin[at] = begin;
    collected.end[at] = begin + segment.p_memsz;
  }
  return 0;
}

bool ExecutableRanges::refresh() {
  refresh_lock_.lock();
  collected_.count = 0;
  collected_.overflowed = false;
  dl_iterate_phdr(add_module, &collected_);

  const uint32_t spare = published_.load(std::memory_order_relaxed) ^ 1;
  Table& table = tables_[spare];
  // Odd while written: a reader still in this table from two refreshes ago retries.
  table.sequence.fetch_add(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  for (uint32_t i = 0; i < collected_.count; ++i) {
    table.begin[i].store(collected_.begin[i], std::memory_order_relaxed);
    table.end[i].store(collected_.end[i], std::memory_order_relaxed);
  }
  table.count.store(collected_.count, std::memory_order_relaxed);
  table.sequence.fetch_add(1, std::memory_order_release);
  published_.store(spare, std::memory_order_release);

  // dlsym, not &__libc_start_main: in a non-PIE program that would be the address of a PLT entry.
  const auto libc_function = reinterpret_cast<uintptr_t>(dlsym(RTLD_DEFAULT, "__libc_start_main"));
  libc_begin_.store(0, std::memory_order_relaxed);
  libc_end_.store(0, std::memory_order_relaxed);
  for (uint32_t i = 0; i < collected_.count; ++i) {
    if (libc_function >= collected_.begin[i] && libc_function < collected_.end[i]) {
      libc_begin_.store(collected_.begin[i], std::memory_order_relaxed);
      libc_end_.store(collected_.end[i], std::memory_order_relaxed);
    }
  }
  const bool complete = !collected_.overflowed;
  refresh_lock_.unlock();
  return complete;
}

bool ExecutableRanges::contains(uintptr_t address) const {
  for (int attempt = 0; attempt < 4; ++attempt) {
    const Table& table = tables_[published_.load(std::memory_order_acquire)];
    const uint32_t sequence = table.sequence.load(std::memory_order_acquire);
    if (sequence & 1) continue;
    uint32_t count = table.count.load(std::memory_order_relaxed);
    if (count > kMaxRanges) count = kMaxRanges;
    // The last range that begins at or below `address`.
    uint32_t low = 0, high = count;
    while (low < high) {
      const uint32_t middle = (low + high) / 2;
      if (table.begin[middle].load(std::memory_order_relaxed) <= address)
        low = middle + 1;
      else
        high = middle;
    }
    const bool inside = low > 0 && address < table.end[low - 1].load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (table.sequence.load(std::memory_order_relaxed) == sequence) return inside;
  }
  return false;
}

uint32_t ExecutableRanges::range_count() const {
  return tables_[published_.load(std::memory_order_acquire)].count.load(std::memory_order_relaxed);
}

ExecutableRanges& executable_ranges() {
  // Constant-initialised (no guard, no constructor to run), so usable before the runtime's own
  // constructor and from any thread.
  static constinit ExecutableRanges ranges;
  return ranges;
}

}  // namespace lockscope::runtime
