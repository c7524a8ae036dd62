#include "common/log_histogram.h"

#include <gtest/gtest.h>

#include "analysis/profile_model.h"

namespace lockscope {
namespace {

using Layout = LogHistogramLayout;

TEST(LogHistogram, EveryValueLiesWithinItsBucketsBounds) {
  for (uint64_t v = 0; v < 200000; ++v) {
    const int b = Layout::bucket_of(v);
    ASSERT_LE(v, Layout::upper_ns(b)) << v;
    if (b > 0) {
      ASSERT_GT(v, Layout::lower_ns(b)) << v;
    }
  }
  for (uint64_t v = 1; v < (uint64_t{1} << 62); v = v * 3 + 7) {
    const int b = Layout::bucket_of(v);
    ASSERT_GE(b, 0);
    ASSERT_LT(b, Layout::kBuckets);
    if (b < Layout::kBuckets - 1) {
      ASSERT_LE(v, Layout::upper_ns(b)) << v;
    }
    if (b > 0) {
      ASSERT_GT(v, Layout::lower_ns(b)) << v;
    }
  }
}

TEST(LogHistogram, BucketsAreContiguousAndIncreasing) {
  for (int b = 1; b < Layout::kBuckets; ++b) {
    EXPECT_EQ(Layout::lower_ns(b), Layout::upper_ns(b - 1)) << b;
    EXPECT_GE(Layout::upper_ns(b), Layout::lower_ns(b)) << b;
  }
}

TEST(LogHistogram, SeedReportBoundariesAreBucketBoundaries) {
  // <= 1 us, <= 10 us, <= 100 us, <= 1000 us must be exact sums of whole buckets.
  for (uint64_t bound : kReportBucketBoundsNs) {
    EXPECT_EQ(Layout::upper_ns(Layout::bucket_of(bound)), bound);
    EXPECT_EQ(Layout::lower_ns(Layout::bucket_of(bound + 1)), bound);
  }
}

TEST(LogHistogram, ReportBucketsSplitExactlyAtTheMicrosecondBoundaries) {
  LatencyHistogram histogram;
  const uint64_t values[] = {0,      999,    1000,    1001,    10000,        10001,
                             100000, 100001, 1000000, 1000001, 5000000000ull};
  for (uint64_t v : values) histogram.add(Layout::bucket_of(v), 1);
  const auto buckets = report_buckets(histogram);
  EXPECT_EQ(buckets[0], 3u);  // 0, 999, 1000
  EXPECT_EQ(buckets[1], 2u);  // 1001, 10000
  EXPECT_EQ(buckets[2], 2u);
  EXPECT_EQ(buckets[3], 2u);
  EXPECT_EQ(buckets[4], 2u);
  EXPECT_EQ(buckets[0] + buckets[1] + buckets[2] + buckets[3] + buckets[4], histogram.total());
}

TEST(LogHistogram, PercentilesAreWithinABucketOfTheTruth) {
  LatencyHistogram histogram;
  for (uint64_t v = 1; v <= 10000; ++v) histogram.add(Layout::bucket_of(v * 100), 1);
  // True p50 = 500 us, p99 = 990 us; buckets are at most half a leading digit wide.
  EXPECT_NEAR(histogram.percentile(0.50), 500000, 50000);
  EXPECT_NEAR(histogram.percentile(0.99), 990000, 50000);
  EXPECT_EQ(LatencyHistogram{}.percentile(0.99), 0);
  LatencyHistogram uncontended;
  uncontended.add(0, 100);
  EXPECT_EQ(uncontended.percentile(0.99), 0) << "no wait reads as 0, not 1 ns";
}

// Sparse: a histogram holds only the buckets it counts, in order, whatever order they come in.
TEST(LogHistogram, KeepsOnlyCountedBucketsInOrderAndMergesThem) {
  LatencyHistogram a, b;
  a.add(50, 2);
  a.add(10, 1);
  a.add(50, 3);
  a.add(7, 0);  // nothing counted: no bucket
  b.add(199, 4);
  b.add(10, 6);
  EXPECT_EQ(a.bins(), (std::vector<LatencyHistogram::Bin>{{1, 10}, {5, 50}}));
  a.add(b);
  EXPECT_EQ(a.bins(), (std::vector<LatencyHistogram::Bin>{{7, 10}, {5, 50}, {4, 199}}));
  EXPECT_EQ(a.count(10), 7u);
  EXPECT_EQ(a.count(11), 0u);
  EXPECT_EQ(a.total(), 16u);
  EXPECT_EQ(sizeof(LatencyHistogram::Bin), 16u) << "as a bin of the file";
}

}  // namespace
}  // namespace lockscope
