// CRC-32 (IEEE 802.3, the zlib polynomial), header-only and allocation-free so that the preload
// runtime (libc only) and the reader compute the same section checksums.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lockscope {

namespace detail {
struct Crc32Table {
  uint32_t entries[256];
  constexpr Crc32Table() : entries{} {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      entries[i] = c;
    }
  }
};
inline constexpr Crc32Table kCrc32Table{};
}  // namespace detail

// Continue a CRC over more bytes: crc32(crc32(0, a), b) == crc32(0, a ++ b).
inline uint32_t crc32(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = detail::kCrc32Table.entries[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

}  // namespace lockscope
