// Decimal numbers in and out of fixed buffers, without allocation or locale: async-signal-safe,
// for the preload runtime (paths under /proc, marker names) and the CLI's /proc readers alike.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lockscope {

// Reads the digits at p (advancing it) into `out`; false when there are none or they overflow.
inline bool parse_decimal(const char*& p, const char* end, uint64_t& out) {
  const char* begin = p;
  uint64_t value = 0;
  for (; p < end && *p >= '0' && *p <= '9'; ++p) {
    if (value > (UINT64_MAX - static_cast<uint64_t>(*p - '0')) / 10) return false;
    value = value * 10 + static_cast<uint64_t>(*p - '0');
  }
  out = value;
  return p != begin;
}

// Writes `value` at out[at...] (no terminator); the new end, or `size` when it did not fit.
inline size_t append_decimal(char* out, size_t at, size_t size, uint64_t value) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value);
  while (n && at + 1 < size) out[at++] = digits[--n];
  return n ? size : at;
}

}  // namespace lockscope
