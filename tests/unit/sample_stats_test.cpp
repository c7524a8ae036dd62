// bench/sample_stats.h: exact values on small hand-checked samples.
#include "bench/sample_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

namespace lockscope::stats {
namespace {

TEST(SampleStatsTest, SummaryOfAKnownSample) {
  // mean 5, sample variance 32/7 (the classic 2,4,4,4,5,5,7,9 example, n − 1 = 7)
  const SampleSummary s = summarize({9, 2, 5, 4, 4, 7, 5, 4});
  EXPECT_EQ(s.count, 8u);
  EXPECT_DOUBLE_EQ(s.min, 2);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(32.0 / 7.0));
  EXPECT_DOUBLE_EQ(s.median, 4.5);  // mean of the middle two (4, 5)
}

TEST(SampleStatsTest, PercentilesInterpolateBetweenClosestRanks) {
  const std::vector<double> sorted = {10, 20, 30, 40, 50};
  EXPECT_DOUBLE_EQ(percentile_of_sorted(sorted, 0.0), 10);
  EXPECT_DOUBLE_EQ(percentile_of_sorted(sorted, 0.5), 30);
  EXPECT_DOUBLE_EQ(percentile_of_sorted(sorted, 1.0), 50);
  EXPECT_DOUBLE_EQ(percentile_of_sorted(sorted, 0.9), 46);       // rank 3.6 → 40 + 0.6 × 10
  EXPECT_DOUBLE_EQ(percentile_of_sorted(sorted, 0.125), 15);     // rank 0.5
  EXPECT_DOUBLE_EQ(percentile({50, 10, 40, 30, 20}, 0.25), 20);  // unsorted input is sorted first
  EXPECT_DOUBLE_EQ(percentile_of_sorted(sorted, 1.5), 50);       // q is clamped
}

TEST(SampleStatsTest, SingleSampleHasZeroSpread) {
  const SampleSummary s = summarize({3.5});
  EXPECT_DOUBLE_EQ(s.min, 3.5);
  EXPECT_DOUBLE_EQ(s.max, 3.5);
  EXPECT_DOUBLE_EQ(s.median, 3.5);
  EXPECT_DOUBLE_EQ(s.stddev, 0);
  EXPECT_EQ(s.outliers, 0u);
}

TEST(SampleStatsTest, EmptyInputIsAnError) {
  EXPECT_THROW(summarize({}), std::invalid_argument);
  EXPECT_THROW(mean({}), std::invalid_argument);
  EXPECT_THROW(percentile({}, 0.5), std::invalid_argument);
  EXPECT_DOUBLE_EQ(stddev({}), 0);
}

TEST(SampleStatsTest, OutliersUseTheModifiedZScore) {
  // median 10, MAD 1: 100 is far beyond 3.5 scaled MADs, 11 and 9 are not.
  EXPECT_EQ(count_outliers({9, 10, 10, 11, 10, 9, 11, 100}), 1u);
  EXPECT_EQ(count_outliers({9, 10, 11}), 0u);
  EXPECT_EQ(count_outliers({5, 5, 5, 5, 6}), 0u);  // MAD 0: nothing is called an outlier
}

TEST(SampleStatsTest, RelativeRatioPropagatesRelativeErrors) {
  // 3% and 4% relative errors combine to 5%.
  const RelativeRatio r = relative_ratio(200, 6, 100, 4);
  EXPECT_DOUBLE_EQ(r.ratio, 2.0);
  EXPECT_NEAR(r.uncertainty, 2.0 * 0.05, 1e-12);
  SampleSummary a, b;
  a.mean = 142;
  b.mean = 100;
  const RelativeRatio exact = relative_ratio(a, b);
  EXPECT_DOUBLE_EQ(exact.ratio, 1.42);
  EXPECT_DOUBLE_EQ(exact.uncertainty, 0);
  EXPECT_THROW(relative_ratio(1, 0, 0, 0), std::invalid_argument);
}

}  // namespace
}  // namespace lockscope::stats
