#include "runtime/clock.h"

#include <cpuid.h>

namespace lockscope::runtime {

bool tsc_is_invariant() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) || eax < 0x80000007u) return false;
  __get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx);
  return (edx & (1u << 8)) != 0;  // "Invariant TSC"
}

uint64_t measure_tsc_hz(uint64_t window_ns) {
  const uint64_t ns0 = Clock::monotonic_ns();
  const uint64_t t0 = __rdtsc();
  uint64_t ns1;
  do {
    ns1 = Clock::monotonic_ns();
  } while (ns1 - ns0 < window_ns);
  const uint64_t t1 = __rdtsc();
  return static_cast<uint64_t>(static_cast<double>(t1 - t0) * 1e9 / static_cast<double>(ns1 - ns0));
}

void Clock::initialize(uint64_t tsc_hz) {
  use_tsc = tsc_is_invariant();
  if (!use_tsc) {
    ticks_per_second = 1e9;
    ns_per_tick_q32 = uint64_t{1} << 32;
    return;
  }
  if (tsc_hz == 0) tsc_hz = measure_tsc_hz(2000000);
  ticks_per_second = static_cast<double>(tsc_hz);
  ns_per_tick_q32 = static_cast<uint64_t>(1e9 * 4294967296.0 / ticks_per_second);
}

}  // namespace lockscope::runtime
