#include "runtime/clock.h"

namespace lockscope::runtime {

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
