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

// One moment on both clocks: CLOCK_MONOTONIC read between two TSC reads, of 8 tries the one whose
// TSC reads are closest. A thread preempted between a clock read and the TSC read beside it (a
// loaded guest does that) would otherwise pair two different moments, and a 5 ms calibration with
// 10 us between them is 0.2 % off, every duration of the run with it.
struct TscMoment {
  uint64_t tsc;
  uint64_t ns;
};
inline TscMoment tsc_moment() {
  TscMoment best{};
  uint64_t best_gap = ~uint64_t{0};
  for (int i = 0; i < 8; ++i) {
    const uint64_t before = __rdtsc();
    const uint64_t ns = monotonic_now_ns();
    const uint64_t after = __rdtsc();
    if (after - before < best_gap) {
      best_gap = after - before;
      best = TscMoment{before + (after - before) / 2, ns};
    }
  }
  return best;
}

// Waits `window_ns` against CLOCK_MONOTONIC, asleep (a busy wait cost the CLI 20 ms of CPU per
// run, 5 % of a 0.4 s program's); the error is about the two moments' TSC gaps (tens of ns) /
// window, whatever happens between them.
inline uint64_t measure_tsc_hz(uint64_t window_ns) {
  const TscMoment start = tsc_moment();
  for (uint64_t elapsed; (elapsed = monotonic_now_ns() - start.ns) < window_ns;) {
    const uint64_t left = window_ns - elapsed;
    timespec pause{static_cast<time_t>(left / 1000000000u), static_cast<long>(left % 1000000000u)};
    nanosleep(&pause, nullptr);
  }
  const TscMoment end = tsc_moment();
  return static_cast<uint64_t>(static_cast<double>(end.tsc - start.tsc) * 1e9 /
                               static_cast<double>(end.ns - start.ns));
}

}  // namespace lockscope
