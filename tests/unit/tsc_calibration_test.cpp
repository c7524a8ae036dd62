// The TSC calibration the CLI hands to every profiled process: each moment pairs the two clocks
// within a few hundred ns, and two calibrations agree to well under 0.1 % (before moments were
// bracketed, a preemption between a clock read and its TSC read made one 0.2 % off on a loaded
// guest, and every duration of the run with it).
#include "common/tsc_calibration.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace lockscope {
namespace {

TEST(TscCalibration, MomentsAreCloseAndCalibrationsAgree) {
  if (!tsc_is_invariant()) GTEST_SKIP() << "no invariant TSC here";
  const TscMoment a = tsc_moment();
  const TscMoment b = tsc_moment();
  EXPECT_GE(b.tsc, a.tsc);
  EXPECT_GE(b.ns, a.ns);
  uint64_t low = ~uint64_t{0}, high = 0;
  for (int i = 0; i < 5; ++i) {
    const uint64_t hz = measure_tsc_hz(5'000'000);
    low = std::min(low, hz);
    high = std::max(high, hz);
  }
  EXPECT_GT(low, 100'000'000u) << "a TSC of at least 100 MHz";
  EXPECT_LT(double(high - low) / double(low), 1e-3) << low << " .. " << high << " Hz";
}

}  // namespace
}  // namespace lockscope
