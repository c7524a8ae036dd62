// The held-lock stack's bound (docs/runtime.md's mechanisms table): a thread tracks 64 nested
// holds; a 65th and deeper is acquired, counted and released as any other, but not timed, and
// each such acquisition is counted in held_stack_overflows. The program runs unchanged.
#include <gtest/gtest.h>

#include <string>

#include "integration/lockscope_harness.h"

namespace lockscope::testing {
namespace {

TEST(HeldStack, HoldsDeeperThan64AreCountedNotTimedAndTheOverflowsAreCounted) {
  constexpr int kDepth = 70, kRounds = 3, kTracked = 64;
  TemporaryDirectory dir;
  // --hold-sample 1: every hold the stack tracks is timed, so an untimed one is the bound's.
  const ProcessProfile process =
      record_unchanged(dir, "deep_nesting", {std::to_string(kDepth), std::to_string(kRounds)},
                       {"--hold-sample", "1"});
  EXPECT_EQ(process.counter(format::Counter::kHeldStackOverflow),
            uint64_t{kDepth - kTracked} * kRounds);
  ASSERT_EQ(process.locks.size(), size_t{kDepth});
  size_t timed = 0, untimed = 0;
  for (const LockSummary& lock : process.locks) {
    EXPECT_EQ(lock.acquisitions, uint64_t{kRounds}) << lock.name;
    EXPECT_EQ(lock.releases, uint64_t{kRounds}) << lock.name;
    uint64_t samples = 0;
    for (const SiteSummary& site : lock.sites) samples += site.hold_samples;
    if (samples == uint64_t{kRounds})
      ++timed;
    else if (samples == 0)
      ++untimed;
  }
  EXPECT_EQ(timed, size_t{kTracked});
  EXPECT_EQ(untimed, size_t{kDepth - kTracked});
}

}  // namespace
}  // namespace lockscope::testing
