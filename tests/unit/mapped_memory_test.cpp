// The runtime's memory from the kernel (src/runtime/mapped_memory.*, bump_arena.*, compiled into
// this test): a large region asked on huge pages starts on a huge-page boundary; every region is
// zeroed, writable, and given back whole; an arena that was zero-filled rather than constructed
// (as a thread's table is, in mapped memory) still bump-allocates from chunks that grow, instead
// of mapping one per allocation, and one told it will be large starts with the largest; the
// writer's buffers of a quarter MiB or more are whole huge pages; what a region's Fill says is
// populated at once is resident, and nothing more.
#include "runtime/mapped_memory.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <new>
#include <string>
#include <vector>

#include "runtime/bump_arena.h"
#include "runtime/byte_buffer.h"
#include "runtime/chunked_array.h"

namespace lockscope::runtime {
namespace {

TEST(MappedMemory, ALargeRegionAskedOnHugePagesStartsOnOneAndIsZeroed) {
  for (size_t bytes : {size_t{4096}, size_t{100000}, kHugePageBytes, 3 * kHugePageBytes + 12345})
    for (bool huge : {false, true}) {
      auto* memory = static_cast<unsigned char*>(map_memory(bytes, huge));
      ASSERT_NE(memory, nullptr) << bytes;
      if (huge && bytes >= kHugePageBytes) {
        EXPECT_EQ(reinterpret_cast<uintptr_t>(memory) % kHugePageBytes, 0u) << bytes;
      }
      for (size_t i = 0; i < bytes; i += 4096) EXPECT_EQ(memory[i], 0) << i;
      EXPECT_EQ(memory[bytes - 1], 0);
      std::memset(memory, 0x5a, bytes);  // all of it is ours
      EXPECT_EQ(munmap(memory, bytes), 0);
    }
}

TEST(MappedMemory, ErrnoIsKept) {
  errno = 1234;
  void* memory = map_memory(3 * kHugePageBytes, true);
  EXPECT_EQ(errno, 1234);
  munmap(memory, 3 * kHugePageBytes);
}

// Consecutive allocations come from one chunk: addresses 64 bytes apart but at the few chunk
// boundaries (64 KiB doubling to 2 MiB), in an arena made of zeroed bytes as in a thread's slot.
TEST(BumpArena, AZeroFilledArenaAllocatesFromGrowingChunks) {
  alignas(BumpArena) unsigned char storage[sizeof(BumpArena)];
  std::memset(storage, 0, sizeof(storage));
  auto* arena = reinterpret_cast<BumpArena*>(storage);
  constexpr int kAllocations = 100000;  // 6.4 MB: chunks of 64 KiB ... 2 MiB
  unsigned char* previous = nullptr;
  int jumps = 0;
  for (int i = 0; i < kAllocations; ++i) {
    auto* block = static_cast<unsigned char*>(arena->allocate(64));
    ASSERT_NE(block, nullptr);
    ASSERT_EQ(block[0] | block[63], 0) << "zeroed";
    block[0] = block[63] = 1;
    if (previous && block != previous + 64) ++jumps;
    previous = block;
  }
  EXPECT_LE(jumps, 12) << "a new chunk for every few allocations";
  arena->reset();
}

TEST(ByteBuffer, KeepsItsBytesAcrossTheMoveToHugePages) {
  ByteBuffer buffer;
  for (uint32_t i = 0; i < 1000000; ++i) ASSERT_TRUE(buffer.append_record(i));
  ASSERT_EQ(buffer.size(), 4000000u);
  for (uint32_t i = 0; i < 1000000; i += 997) {
    uint32_t value;
    std::memcpy(&value, buffer.data() + i * sizeof(uint32_t), sizeof(value));
    ASSERT_EQ(value, i);
  }
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % kHugePageBytes, 0u);
}

// A section of a few hundred KiB (the sites of a profile of a few thousand) is one huge page, not
// a page fault per 4 KiB; a small one stays on 4 KiB pages, and so does a buffer reserved large
// but not marked as written whole (the module list reserves 1 MiB and writes a few KiB of it).
TEST(ByteBuffer, ASectionFromAQuarterMebibyteIsOnAWholeHugePage) {
  ByteBuffer small, quarter, scratch;
  small.use_huge_pages_from(ByteBuffer::kSectionHugeFromBytes);
  quarter.use_huge_pages_from(ByteBuffer::kSectionHugeFromBytes);
  ASSERT_TRUE(small.reserve(ByteBuffer::kSectionHugeFromBytes / 2));
  ASSERT_TRUE(quarter.reserve(ByteBuffer::kSectionHugeFromBytes));
  ASSERT_TRUE(scratch.reserve(size_t{1} << 20));
  EXPECT_EQ(small.capacity(), ByteBuffer::kSectionHugeFromBytes / 2);
  EXPECT_EQ(quarter.capacity(), kHugePageBytes);
  EXPECT_EQ(scratch.capacity(), size_t{1} << 20) << "not rounded up to a huge page";
  EXPECT_EQ(reinterpret_cast<uintptr_t>(quarter.data()) % kHugePageBytes, 0u);
  // Its capacity is the whole huge page: filling it does not move it.
  const unsigned char* before = quarter.data();
  std::vector<unsigned char> bytes(kHugePageBytes, 0x5a);
  ASSERT_TRUE(quarter.append(bytes.data(), bytes.size()));
  EXPECT_EQ(quarter.data(), before);
  EXPECT_EQ(quarter.data()[kHugePageBytes - 1], 0x5a);
  ASSERT_TRUE(small.append(bytes.data(), 10));
  EXPECT_EQ(small.size(), 10u);
}

// An arena told it will hold megabytes maps a whole 2 MiB chunk first (on huge pages when asked),
// instead of 64 KiB doubling.
TEST(BumpArena, AnArenaThatPrefersLargeChunksStartsWithTheLargest) {
  BumpArena arena;
  arena.use_huge_pages();
  arena.prefer_large_chunks();
  auto* first = static_cast<unsigned char*>(arena.allocate(64));
  ASSERT_NE(first, nullptr);
  unsigned char* previous = first;
  for (int i = 1; i < 30000; ++i) {  // 1.9 MB: all from the first chunk
    auto* block = static_cast<unsigned char*>(arena.allocate(64));
    ASSERT_EQ(block, previous + 64) << i;
    previous = block;
  }
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) / kHugePageBytes,
            reinterpret_cast<uintptr_t>(previous) / kHugePageBytes)
      << "one huge page";
  arena.reset();
}

// Pages of [start, start + bytes) in memory (mincore).
size_t resident_pages(const void* start, size_t bytes) {
  const size_t pages = (bytes + 4095) / 4096;
  std::vector<unsigned char> in_core(pages);
  if (mincore(const_cast<void*>(start), bytes, in_core.data()) != 0) return SIZE_MAX;
  size_t resident = 0;
  for (unsigned char page : in_core) resident += page & 1;
  return resident;
}

// Whether page counts can be exact here: the kernel populates on request (Linux 5.14), and no
// transparent huge page backs memory that did not ask for one (enabled=always would).
bool populate_is_exact() {
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string setting;
  std::getline(thp, setting);
  if (setting.find("[always]") != std::string::npos) return false;
  void* probe = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  const bool populates = madvise(probe, 4096, 23 /* MADV_POPULATE_WRITE */) == 0;
  munmap(probe, 4096);
  return populates;
}

TEST(MappedMemory, ARegionIsPopulatedAsItsFillSaysAndNoMore) {
  if (!populate_is_exact()) GTEST_SKIP() << "no MADV_POPULATE_WRITE, or THP enabled=always";
  constexpr size_t kPages = kPopulateWindowBytes / 4096;
  struct Case {
    size_t bytes;
    Fill fill;
    size_t resident;
  };
  for (const Case& c :
       {Case{64 << 10, Fill::kAtRandom, 0},  // below kPopulateBytes: lazy
        Case{1 << 20, Fill::kAtRandom, 256}, Case{1 << 20, Fill::kOnTouch, 0},
        Case{1 << 20, Fill::kInOrder, 256}, Case{3 * kPopulateWindowBytes, Fill::kInOrder, kPages},
        Case{3 * kPopulateWindowBytes, Fill::kAtRandom, 3 * kPages}}) {
    auto* memory = static_cast<char*>(map_memory(c.bytes, false, c.fill));
    ASSERT_NE(memory, nullptr);
    EXPECT_EQ(resident_pages(memory, c.bytes), c.resident)
        << c.bytes << " bytes, fill " << static_cast<int>(c.fill);
    if (c.fill == Fill::kInOrder && c.bytes > kPopulateWindowBytes) {
      populate_window(memory + 2 * kPopulateWindowBytes, memory + c.bytes - 4096);
      EXPECT_EQ(resident_pages(memory, c.bytes), 2 * kPages - 1) << "the window, to the end given";
    }
    munmap(memory, c.bytes);
  }
}

// An array filled in order has each 2 MiB window of a large chunk populated as appends reach it;
// one indexed sparsely has only the pages it touched.
TEST(ChunkedArray, ALargeChunkIsPopulatedAWindowAtATimeAsAppendsReachIt) {
  if (!populate_is_exact()) GTEST_SKIP() << "no MADV_POPULATE_WRITE, or THP enabled=always";
  constexpr size_t kPerWindow = kPopulateWindowBytes / sizeof(uint64_t);
  constexpr size_t kPages = kPopulateWindowBytes / 4096;
  auto* dense = new ChunkedArray<uint64_t, 20>;  // first chunk: 2^20 elements, 8 MiB
  ASSERT_NE(dense->append([](uint64_t& v) { v = 1; }), nullptr);
  uint64_t* base = &(*dense)[0];
  EXPECT_EQ(resident_pages(base, 4 * kPopulateWindowBytes), kPages);
  for (size_t i = 1; i < kPerWindow; ++i) ASSERT_NE(dense->append([](uint64_t&) {}), nullptr);
  EXPECT_EQ(resident_pages(base, 4 * kPopulateWindowBytes), kPages) << "not before it is reached";
  ASSERT_NE(dense->append([](uint64_t&) {}), nullptr);  // the first of the second window
  EXPECT_EQ(resident_pages(base, 4 * kPopulateWindowBytes), 2 * kPages);
  dense->reset();
  delete dense;

  auto* sparse = new ChunkedArray<uint64_t, 20, false>;
  uint64_t* far = sparse->slot(3 * kPerWindow);
  ASSERT_NE(far, nullptr);
  *far = 1;
  EXPECT_EQ(resident_pages(far - 3 * kPerWindow, 4 * kPopulateWindowBytes), 1u);
  sparse->reset();
  delete sparse;
}

}  // namespace
}  // namespace lockscope::runtime
