// TSC facts shared by the CLI (which measures the frequency once per run and hands it to every
// profiled process in LOCKSCOPE_CONFIG) and the runtime (fallback when run without the CLI).
#pragma once

#include <cpuid.h>
#include <x86intrin.h>

#include <cstdint>
#include <ctime>

namespace lockscope {

// Clock ticks to nanoseconds with the runtime's fixed-point factor (ns = ticks * q32 >> 32): the
// runtime times with it, and a trace's reader must convert the same way to get the same numbers.
inline uint64_t ticks_to_ns_q32(uint64_t ticks, uint64_t ns_per_tick_q32) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(ticks) * ns_per_tick_q32) >> 32);
}

inline uint64_t monotonic_now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Invariant TSC (CPUID 0x80000007 EDX bit 8): constant rate, keeps counting in deep C-states.
inline bool tsc_is_invariant() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) || eax < 0x80000007u) return false;
  __get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx);
  return (edx & (1u << 8)) != 0;
}

// Busy-waits `window_ns` against CLOCK_MONOTONIC; the error is ~2 x clock_gettime jitter / window.
inline uint64_t measure_tsc_hz(uint64_t window_ns) {
  const uint64_t ns0 = monotonic_now_ns();
  const uint64_t t0 = __rdtsc();
  uint64_t ns1;
  do {
    ns1 = monotonic_now_ns();
  } while (ns1 - ns0 < window_ns);
  const uint64_t t1 = __rdtsc();
  return static_cast<uint64_t>(static_cast<double>(t1 - t0) * 1e9 / static_cast<double>(ns1 - ns0));
}

}  // namespace lockscope
