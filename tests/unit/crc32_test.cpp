// The section checksum (slicing-by-8) against the standard CRC-32 check values and against itself
// fed in pieces of every alignment.
#include "common/crc32.h"

#include <gtest/gtest.h>

#include <vector>

namespace lockscope {
namespace {

TEST(Crc32, StandardCheckValues) {
  EXPECT_EQ(crc32(0, "123456789", 9), 0xCBF43926u);  // the CRC-32/ISO-HDLC check value
  EXPECT_EQ(crc32(0, "", 0), 0u);
  std::vector<unsigned char> bytes(768);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i);
  EXPECT_EQ(crc32(0, bytes.data(), bytes.size()), 0xB0C0DF2Au);  // zlib.crc32(bytes(range(256))*3)
}

TEST(Crc32, ContinuingOverPiecesEqualsTheWhole) {
  std::vector<unsigned char> bytes(1000);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 131 + 7);
  const uint32_t whole = crc32(0, bytes.data(), bytes.size());
  for (size_t split = 0; split <= 17; ++split)
    EXPECT_EQ(crc32(crc32(0, bytes.data(), split), bytes.data() + split, bytes.size() - split),
              whole)
        << "split at " << split;
}

}  // namespace
}  // namespace lockscope
