// The locks table's cells (report/lock_rows.h).
#include "report/lock_rows.h"

#include <gtest/gtest.h>

namespace lockscope {
namespace {

std::string hold_error_text(uint64_t hold_sum_ns, uint64_t hold_error_ns) {
  ProcessProfile process;
  LockSummary lock;
  lock.hold_sum_ns = hold_sum_ns;
  lock.hold_error_ns = hold_error_ns;
  const LockRow row{&process, &lock, nullptr, ""};
  return find_lock_column("hold-error")->text(row);
}

// The HOLD TOTAL's error bound: "exact" when every hold was timed, a percentage otherwise, and
// never "±0.0%" for an estimate whose error rounds to nothing.
TEST(LockRows, HoldErrorSaysExactOrItsBoundNeverZero) {
  EXPECT_EQ(hold_error_text(1'000'000, 0), "exact");
  EXPECT_EQ(hold_error_text(0, 0), "");
  EXPECT_EQ(hold_error_text(1'000'000, 25'000), "±2.5%");
  EXPECT_EQ(hold_error_text(1'000'000'000, 300), "<±0.1%");
  EXPECT_EQ(hold_error_text(1'000'000, 500), "±0.1%");
}

}  // namespace
}  // namespace lockscope
