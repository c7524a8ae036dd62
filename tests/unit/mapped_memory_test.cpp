// The runtime's memory from the kernel (src/runtime/mapped_memory.*, bump_arena.*, compiled into
// this test): a large region asked on huge pages starts on a huge-page boundary; every region is
// zeroed, writable, and given back whole; an arena
// that was zero-filled rather than constructed (as a thread's table is, in mapped memory) still
// bump-allocates from chunks that grow, instead of mapping one per allocation.
#include "runtime/mapped_memory.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <new>

#include "runtime/bump_arena.h"
#include "runtime/byte_buffer.h"

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

}  // namespace
}  // namespace lockscope::runtime
