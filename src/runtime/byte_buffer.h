// A growable byte buffer on mmap/mremap for the profile writer: the runtime may not use malloc
// (the program may be inside it, or may have replaced it). From 2 MiB on, on huge pages; a buffer
// that will be written whole (a profile's section: use_huge_pages_from) from less, its capacity
// rounded up to whole huge pages: on the reference guest a 2 MiB huge page costs ~0.3 ms to fault
// in and 4 KiB pages ~11 us each, so a section of 256 KiB or more (sysbench mutex's 8,192 sites
// wrote ~1.9 MB in 4 KiB pages, ~5 ms of faults of its ~14.5 ms write) is cheaper on one. Not a
// buffer reserved large and written little (the module list, read at every dlclose too; a scratch
// read of /proc): one huge page would cost it more than its few 4 KiB ones.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "runtime/mapped_memory.h"

namespace lockscope::runtime {

class ByteBuffer {
 public:
  ByteBuffer() = default;
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;
  ~ByteBuffer() {
    if (data_) munmap(data_, capacity_);
  }

  bool append(const void* bytes, size_t size) {
    if (!reserve(size_ + size)) return false;
    std::memcpy(data_ + size_, bytes, size);
    size_ += size;
    return true;
  }
  template <typename Record>
  bool append_record(const Record& record) {
    return append(&record, sizeof(Record));
  }
  // Room for `wanted` bytes in all, when the kernel gives it; the buffer is not failed otherwise.
  void reserve_hint(size_t wanted) {
    if (!failed_ && !reserve(wanted)) failed_ = false;
  }
  bool reserve(size_t wanted) {
    if (failed_) return false;
    if (wanted <= capacity_) return true;
    size_t capacity = capacity_ ? capacity_ : 65536;
    while (capacity < wanted) capacity *= 2;
    void* memory = nullptr;
    if (capacity < huge_from_) {
      memory = data_ ? mremap(data_, capacity_, capacity, MREMAP_MAYMOVE)
                     : mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                            -1, 0);
      if (memory == MAP_FAILED) memory = nullptr;
    } else {
      capacity = (capacity + kHugePageBytes - 1) & ~(kHugePageBytes - 1);  // whole huge pages
      memory = map_memory(capacity, true);
      // Copied, not moved by mremap, so that the larger buffer is on huge pages (mapped_memory.h).
      if (memory != nullptr && data_) {
        std::memcpy(memory, data_, size_);
        munmap(data_, capacity_);
      }
    }
    if (memory == nullptr) {
      failed_ = true;
      return false;
    }
    data_ = static_cast<unsigned char*>(memory);
    capacity_ = capacity;
    return true;
  }
  unsigned char* data() { return data_; }
  size_t size() const { return size_; }
  bool failed() const { return failed_; }

  size_t capacity() const { return capacity_; }
  // On huge pages from `bytes` of capacity on (before the first reserve).
  void use_huge_pages_from(size_t bytes) { huge_from_ = bytes; }
  static constexpr size_t kSectionHugeFromBytes = size_t{256} << 10;

 private:
  unsigned char* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  size_t huge_from_ = kHugePageBytes;
  bool failed_ = false;
};

}  // namespace lockscope::runtime
