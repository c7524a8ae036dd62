// Time on the hot path: the TSC when it is invariant (constant rate, does not stop in deep
// C-states), else CLOCK_MONOTONIC through the vDSO. Durations are converted to nanoseconds with one
// 128-bit multiply by a fixed-point factor set once at start-up: the CLI measures the TSC frequency
// once and passes it in LOCKSCOPE_CONFIG (tsc_hz=...), so short-lived child processes need no
// calibration.
#pragma once

#include <cstdint>

#include "common/tsc_calibration.h"

namespace lockscope::runtime {

struct Clock {
  bool use_tsc = false;
  double ticks_per_second = 1e9;
  uint64_t ns_per_tick_q32 = uint64_t{1} << 32;  // ns = ticks * ns_per_tick_q32 >> 32

  uint64_t now() const {
    if (use_tsc) return __rdtsc();
    return monotonic_ns();
  }
  uint64_t to_ns(uint64_t ticks) const { return ticks_to_ns_q32(ticks, ns_per_tick_q32); }
  static uint64_t monotonic_ns() { return monotonic_now_ns(); }

  // Chooses the source; `tsc_hz` = 0 means "measure it" (a ~2 ms busy wait, only when lockscope's
  // CLI did not pass the frequency, e.g. a manual LD_PRELOAD).
  void initialize(uint64_t tsc_hz);
};

}  // namespace lockscope::runtime
