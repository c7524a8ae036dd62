// The budget of stack capture (runtime/stack_budget.h): 1 % of a thread's time alive plus 1 ms,
// with each capture charged at most 100 us, so that one capture during which the thread was
// descheduled does not stop its captures for the rest of its life.
#include "runtime/stack_budget.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace lockscope::runtime {
namespace {

constexpr double kTicksPerSecond = 1e9;  // ticks are nanoseconds here
constexpr uint64_t kMicrosecond = 1000;
constexpr uint64_t kMillisecond = 1000 * kMicrosecond;

TEST(StackBudget, AllowsOnePercentOfTheTimeAlivePlusOneMillisecond) {
  EXPECT_TRUE(StackBudget::allows(0, 0, kTicksPerSecond));
  EXPECT_TRUE(StackBudget::allows(kMillisecond, 0, kTicksPerSecond));
  EXPECT_FALSE(StackBudget::allows(kMillisecond + 1, 0, kTicksPerSecond));
  // After 1 s alive: 10 ms of captures plus the first 1 ms.
  EXPECT_TRUE(StackBudget::allows(11 * kMillisecond, 1000 * kMillisecond, kTicksPerSecond));
  EXPECT_FALSE(StackBudget::allows(11 * kMillisecond + 1, 1000 * kMillisecond, kTicksPerSecond));
}

TEST(StackBudget, ACaptureIsChargedWhatItTookUpToOneHundredMicroseconds) {
  EXPECT_EQ(StackBudget::charge(3 * kMicrosecond, kTicksPerSecond), 3 * kMicrosecond);
  EXPECT_EQ(StackBudget::charge(100 * kMicrosecond, kTicksPerSecond), 100 * kMicrosecond);
  EXPECT_EQ(StackBudget::charge(5 * kMillisecond, kTicksPerSecond), 100 * kMicrosecond);
  EXPECT_EQ(StackBudget::charge(5 * kMillisecond, 2.5e9), 250 * kMicrosecond);  // 2.5 GHz TSC
}

// The wrapped_locks fixture's thread (25 ms alive, 200 waits of 3 us walks) that was descheduled
// 5 ms in the middle of one walk keeps the stacks of all its later waits.
TEST(StackBudget, ADescheduledCaptureDoesNotStopTheThreadsLaterCaptures) {
  uint64_t spent = 0, alive = 0, kept = 0;
  for (int wait = 0; wait < 200; ++wait) {
    alive += 125 * kMicrosecond;
    if (!StackBudget::allows(spent, alive, kTicksPerSecond)) continue;
    ++kept;
    spent +=
        StackBudget::charge(wait == 100 ? 5 * kMillisecond : 3 * kMicrosecond, kTicksPerSecond);
  }
  EXPECT_EQ(kept, 200u);
}

}  // namespace
}  // namespace lockscope::runtime
