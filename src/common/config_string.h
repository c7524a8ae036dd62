// The runtime's whole configuration comes from one environment variable, LOCKSCOPE_CONFIG, written
// by the CLI: `key=value,key=value,...,dir=/path/to/profile` (the keys: runtime_config.h). `dir`
// must come last and takes the rest of the string, so a directory name may contain commas. Parsing
// allocates nothing: the runtime reads it before the C library is fully up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "common/runtime_config.h"

namespace lockscope {

struct ConfigString {
  // Calls visit(key, key_length, value, value_length) for each entry; stops early if it returns
  // false. Returns false when an entry has no '='.
  template <typename Visitor>
  static bool for_each(const char* text, Visitor&& visit) {
    const char* p = text;
    while (p && *p) {
      const char* eq = std::strchr(p, '=');
      if (!eq) return false;
      const size_t key_length = static_cast<size_t>(eq - p);
      const char* value = eq + 1;
      const bool takes_rest = key_is(p, key_length, config::kDirectoryKey);
      const char* end = takes_rest ? value + std::strlen(value) : std::strchr(value, ',');
      if (!end) end = value + std::strlen(value);
      if (!visit(p, key_length, value, static_cast<size_t>(end - value))) return true;
      p = *end ? end + 1 : end;
    }
    return true;
  }

  static bool key_is(const char* key, size_t length, const char* expected) {
    return std::strlen(expected) == length && std::strncmp(key, expected, length) == 0;
  }

  // Decimal unsigned integer; false on anything else or overflow.
  static bool parse_u64(const char* value, size_t length, uint64_t& out) {
    if (length == 0) return false;
    uint64_t result = 0;
    for (size_t i = 0; i < length; ++i) {
      if (value[i] < '0' || value[i] > '9') return false;
      const uint64_t digit = static_cast<uint64_t>(value[i] - '0');
      if (result > (UINT64_MAX - digit) / 10) return false;
      result = result * 10 + digit;
    }
    out = result;
    return true;
  }
};

}  // namespace lockscope
