#include "analysis/duration_format.h"

#include <fmt/core.h>

namespace lockscope {

std::string format_duration_ns(double ns) {
  if (ns <= 0) return "0";
  if (ns < 1e3) return fmt::format("{:.0f}ns", ns);
  if (ns < 1e6) return fmt::format("{:.{}f}µs", ns / 1e3, ns < 1e4 ? 2 : ns < 1e5 ? 1 : 0);
  if (ns < 1e9) return fmt::format("{:.{}f}ms", ns / 1e6, ns < 1e7 ? 2 : ns < 1e8 ? 1 : 0);
  return fmt::format("{:.{}f}s", ns / 1e9, ns < 1e10 ? 2 : ns < 1e11 ? 1 : 0);
}

std::string format_count(uint64_t count) {
  std::string digits = fmt::format("{}", count);
  std::string out;
  const size_t n = digits.size();
  for (size_t i = 0; i < n; ++i) {
    out += digits[i];
    if ((n - i - 1) % 3 == 0 && i + 1 < n) out += ',';
  }
  return out;
}

std::string format_share(double share) {
  if (share > 0 && share < 0.001) return "<0.1 %";
  return fmt::format("{:.1f} %", 100 * share);
}

}  // namespace lockscope
