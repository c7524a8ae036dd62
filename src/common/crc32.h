// CRC-32 (IEEE 802.3, the zlib polynomial), header-only and allocation-free so that the preload
// runtime (libc only) and the reader compute the same section checksums.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lockscope {

namespace detail {
// Slicing-by-8 (Intel's): eight tables, eight bytes a step — a profile of millions of records is
// checksummed several times faster than byte by byte. tables[0] is the classic byte table.
struct Crc32Tables {
  uint32_t tables[8][256];
  constexpr Crc32Tables() : tables{} {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      tables[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int t = 1; t < 8; ++t)
        tables[t][i] = (tables[t - 1][i] >> 8) ^ tables[0][tables[t - 1][i] & 0xFF];
  }
};
inline constexpr Crc32Tables kCrc32Tables{};
}  // namespace detail

// Continue a CRC over more bytes: crc32(crc32(0, a), b) == crc32(0, a ++ b).
inline uint32_t crc32(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  const auto& t = detail::kCrc32Tables.tables;
  crc = ~crc;
  for (; size >= 8; size -= 8, p += 8) {
    const uint32_t low =
        crc ^ (uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24);
    crc = t[7][low & 0xFF] ^ t[6][(low >> 8) & 0xFF] ^ t[5][(low >> 16) & 0xFF] ^ t[4][low >> 24] ^
          t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
  }
  for (; size > 0; --size, ++p) crc = t[0][(crc ^ *p) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

}  // namespace lockscope
