// analysis/compare/rank_test.h against numbers computed elsewhere on the same inputs.
//
// p-values: scipy 1.10.1 (numpy 1.24.2; Debian 12's python3-scipy), each made by the python
// line in the comment beside it after `from scipy.stats import mannwhitneyu as mwu`. scipy's U
// is the first sample's, as ours. Textbook: Hollander & Wolfe (1973) p. 69, the chorioamnion
// permeability data of R's ?wilcox.test example, whose Hodges-Lehmann figures SAS's PROC NPAR1WAY
// documentation prints.
//
// Intervals: worked by hand below where they are small; the larger ones by this brute force
// from the definition (exact integer counts of arrangements, not the probability recurrence of
// rank_test.cpp), Python 3.11, `hl(base, changed)`:
//   import functools, math; from scipy.stats import norm
//   @functools.cache
//   def counts(m, n):  # arrangements with U = u: c(u; m, n) = c(u - n; m - 1, n) + c(u; m, n - 1)
//     if m == 0 or n == 0: return [1]
//     a, b, r = counts(m - 1, n), counts(m, n - 1), [0] * (m * n + 1)
//     for u, v in enumerate(a): r[u + n] += v
//     for u, v in enumerate(b): r[u] += v
//     return r
//   def hl(base, changed, conf=0.95, exact=True):
//     m, n = len(base), len(changed); mn = m * n; a = 1 - conf
//     d = sorted(math.log(max(c, 1)) - math.log(max(b, 1)) for b in base for c in changed)
//     med = d[mn // 2] if mn % 2 else (d[mn // 2 - 1] + d[mn // 2]) / 2
//     if exact:
//       c = counts(m, n); cdf = [sum(c[:u + 1]) / sum(c) for u in range(mn + 1)]
//       k = max(1, next(u for u in range(mn + 1) if cdf[u] >= a / 2)); got = 1 - 2 * cdf[k - 1]
//     else:
//       s = math.sqrt(mn * (m + n + 1) / 12); z = norm.ppf(1 - a / 2)
//       k = max(1, math.ceil(mn / 2 - z * s - 0.5)); got = 1 - 2 * norm.cdf((k - .5 - mn / 2) / s)
//     return math.exp(med), math.exp(d[k - 1]), math.exp(d[mn - k]), got
#include "analysis/compare/rank_test.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace lockscope::compare {
namespace {

void expect_relative(double actual, double expected, double tolerance = 1e-9) {
  EXPECT_NEAR(actual, expected, std::abs(expected) * tolerance) << "expected " << expected;
}

// Deterministic samples without ties within or across them (checked: 60 distinct values for
// n = 30, 102 for n = 51): i·7919 mod 1009 and j·104729 mod 1013 scatter the runs' order.
std::vector<double> scattered_base(int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(1000 + (i * 7919) % 1009);
  return v;
}
std::vector<double> scattered_changed(int n, double offset) {
  std::vector<double> v;
  for (int j = 0; j < n; ++j) v.push_back(offset + (j * 104729) % 1013 + 0.5);
  return v;
}

// Hollander & Wolfe's chorioamnion data: term (x) and 12-26 weeks (y).
const std::vector<double> kTerm = {0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46};
const std::vector<double> kEarly = {1.15, 0.88, 0.90, 0.74, 1.21};

TEST(RankTest, FullySeparatedFiveAgainstFiveIsTheSmallestExactP) {
  // mwu([1,2,3,4,5], [6,7,8,9,10], method="exact") -> U 0.0, p 0.007936507936507936 (= 2/252)
  const RankTest below = mann_whitney({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  EXPECT_EQ(below.u, 0);
  EXPECT_TRUE(below.exact);
  expect_relative(below.p_value, 0.007936507936507936);
  const RankTest above = mann_whitney({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5});
  EXPECT_EQ(above.u, 25);
  expect_relative(above.p_value, 0.007936507936507936);
}

TEST(RankTest, TextbookChorioamnionDataExact) {
  // mwu(kTerm, kEarly, method="exact") -> U 35.0, p 0.2544122544122544; SAS prints "Pr >= |S-Mean|
  // 0.2544" (exact two-sided) for the same data.
  const RankTest t = mann_whitney(kTerm, kEarly);
  EXPECT_EQ(t.u, 35);
  EXPECT_TRUE(t.exact);
  expect_relative(t.p_value, 0.2544122544122544);
}

TEST(RankTest, TiesUseTheNormalApproximationWithTieAndContinuityCorrections) {
  // mwu([1,2,2,3,3,3,4,5], [3,4,4,5,5,6,7,7], method="asymptotic") -> U 7.5,
  // p 0.010515245935858907
  const RankTest t = mann_whitney({1, 2, 2, 3, 3, 3, 4, 5}, {3, 4, 4, 5, 5, 6, 7, 7});
  EXPECT_EQ(t.u, 7.5);
  EXPECT_FALSE(t.exact);
  expect_relative(t.p_value, 0.010515245935858907);
  // mwu([i % 7 for i in range(30)], [1 + j % 8 for j in range(30)], method="asymptotic")
  //   -> U 290.0, p 0.017456589942392527
  std::vector<double> x, y;
  for (int i = 0; i < 30; ++i) {
    x.push_back(i % 7);
    y.push_back(1 + i % 8);
  }
  const RankTest many = mann_whitney(x, y);
  EXPECT_EQ(many.u, 290);
  EXPECT_FALSE(many.exact);
  expect_relative(many.p_value, 0.017456589942392527);
}

TEST(RankTest, IdenticalSamplesGivePOne) {
  // mwu([3,3,3], [3,3,3,3], method="asymptotic") -> U 6.0, p 1.0 (no variance at all)
  const RankTest constant = mann_whitney({3, 3, 3}, {3, 3, 3, 3});
  EXPECT_EQ(constant.u, 6);
  EXPECT_EQ(constant.p_value, 1);
  // mwu([1,2,3,4,5], [1,2,3,4,5], method="asymptotic") -> U 12.5, p 1.0 (z < 0, clipped)
  const RankTest same = mann_whitney({1, 2, 3, 4, 5}, {5, 4, 3, 2, 1});
  EXPECT_EQ(same.u, 12.5);
  EXPECT_EQ(same.p_value, 1);
  // One run a side: mwu([7.0], [3.0], method="exact") -> U 1.0, p 1.0
  const RankTest single = mann_whitney({7}, {3});
  EXPECT_EQ(single.u, 1);
  EXPECT_EQ(single.p_value, 1);
}

TEST(RankTest, UnequalSizesExact) {
  // mwu([12.5, 3.1, 7.7], [1.2, 4.4, 5.0, 8.9, 2.3, 6.6, 9.9], method="exact")
  //   -> U 14.0, p 0.5166666666666666
  const RankTest small = mann_whitney({12.5, 3.1, 7.7}, {1.2, 4.4, 5.0, 8.9, 2.3, 6.6, 9.9});
  EXPECT_EQ(small.u, 14);
  EXPECT_TRUE(small.exact);
  expect_relative(small.p_value, 0.5166666666666666);
  // mwu([100 + (i * 37) % 101 for i in range(10)], [120 + (j * 53) % 103 + 0.5 for j in
  //   range(20)], method="exact") -> U 71.0, p 0.21391122620507927
  std::vector<double> x, y;
  for (int i = 0; i < 10; ++i) x.push_back(100 + (i * 37) % 101);
  for (int j = 0; j < 20; ++j) y.push_back(120 + (j * 53) % 103 + 0.5);
  const RankTest larger = mann_whitney(x, y);
  EXPECT_EQ(larger.u, 71);
  EXPECT_TRUE(larger.exact);
  expect_relative(larger.p_value, 0.21391122620507927);
}

TEST(RankTest, ThirtyAgainstThirtyExact) {
  // x = [1000 + (i * 7919) % 1009 for i in range(30)]
  // mwu(x, [1100 + (j * 104729) % 1013 + 0.5 for j in range(30)], method="exact")
  //   -> U 408.0, p 0.5422045024524678
  const RankTest alike = mann_whitney(scattered_base(30), scattered_changed(30, 1100));
  EXPECT_EQ(alike.u, 408);
  EXPECT_TRUE(alike.exact);
  expect_relative(alike.p_value, 0.5422045024524678);
  // mwu(x, [1300 + (j * 104729) % 1013 + 0.5 for j in range(30)], method="exact")
  //   -> U 264.0, p 0.005500259821673264
  const RankTest shifted = mann_whitney(scattered_base(30), scattered_changed(30, 1300));
  EXPECT_EQ(shifted.u, 264);
  expect_relative(shifted.p_value, 0.005500259821673264);
}

TEST(RankTest, FiftyAgainstFiftyKeepsTheFarTail) {
  // mwu(list(range(50)), list(range(50, 100)), method="exact") -> U 0.0,
  // p 1.9823306042836686e-29 (= 2 / C(100, 50): a count of arrangements past 2^64)
  std::vector<double> x, y;
  for (int i = 0; i < 50; ++i) {
    x.push_back(i);
    y.push_back(50 + i);
  }
  const RankTest t = mann_whitney(x, y);
  EXPECT_TRUE(t.exact);
  expect_relative(t.p_value, 1.9823306042836686e-29);
}

TEST(RankTest, AboveMaxExactRunsUsesTheNormalApproximation) {
  // mwu([1000 + (i * 7919) % 1009 for i in range(51)], [1100 + (j * 104729) % 1013 + 0.5 for j
  //   in range(51)], method="asymptotic") -> U 1126.0, p 0.24420885666593783
  const RankTest t = mann_whitney(scattered_base(51), scattered_changed(51, 1100));
  EXPECT_EQ(t.u, 1126);
  EXPECT_FALSE(t.exact);
  expect_relative(t.p_value, 0.24420885666593783);
}

std::vector<double> exp_of(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v) out.push_back(std::exp(x));
  return out;
}

TEST(RankTestRatio, TextbookChorioamnionInterval) {
  // On exp() of the data, log ratios are the differences y_j - x_i of Hollander & Wolfe's data.
  // SAS (PROC NPAR1WAY, Hodges-Lehmann "Location Shift (Ctrl - Trt)"): -0.3050, lower -0.7600,
  // upper 0.1700. The 50 sorted differences begin -1.17 -1.15 -1.03 -1.01 -1.01 -0.99 -0.90
  // -0.76 -0.76 and end 0.15 0.17 0.17 0.32 ... 0.48; R's k = qwilcox(0.025, 10, 5) = 9 gives
  // [d_(9), d_(42)] = [-0.76, 0.15]; SAS's upper 0.17 is d_(43), its k = 8 from
  // floor(mn/2 - 1.96 σ) without the continuity correction. Achieved: 1 - 2 P(U <= 8) =
  // 1 - 2 · 60/3003 = 0.9600399600399601 (hl() above).
  const RatioEstimate r = hodges_lehmann_ratio(exp_of(kTerm), exp_of(kEarly), 0.95, 0);
  expect_relative(std::log(r.ratio), -0.305);
  expect_relative(std::log(r.low), -0.76);
  expect_relative(std::log(r.high), 0.15);
  expect_relative(r.confidence, 0.9600399600399601);
}

TEST(RankTestRatio, DoubledRunsGiveTwoWithTheIntervalWorkedByHand) {
  // Every log ratio is log 2 + log(b_j / b_i), a set symmetric about log 2: the median is 2.
  // k = 3 for 5 against 5 (P(U <= 2) = 4/252 < 0.025 <= P(U <= 3) = 7/252); the third smallest
  // b_j / b_i of {10..50} is 10/30 (after 10/50, 10/40), so low = 2/3, high = 2 · 3 = 6;
  // achieved 1 - 2 · 4/252 = 0.9682539682539683.
  const RatioEstimate r = hodges_lehmann_ratio({10, 20, 30, 40, 50}, {20, 40, 60, 80, 100});
  expect_relative(r.ratio, 2);
  expect_relative(r.low, 2.0 / 3);
  expect_relative(r.high, 6);
  expect_relative(r.confidence, 0.9682539682539683);
}

TEST(RankTestRatio, ZerosAndValuesBelowTheFloorAreTakenAsTheFloor) {
  const RatioEstimate from_zero = hodges_lehmann_ratio({0, 0, 0, 0, 0}, {1000, 1000, 1000, 1000});
  expect_relative(from_zero.ratio, 1000);  // floor 1: "at least 1,000 times more"
  const RatioEstimate floor_ten = hodges_lehmann_ratio({0, 3, 0, 9, 0}, {1000}, 0.95, 10);
  expect_relative(floor_ten.ratio, 100);
  // A floor of 0 still may not give log(0) - log(0) = NaN (and NaN would break the sort).
  const RatioEstimate zero_floor = hodges_lehmann_ratio({0, 0, 0}, {0, 0}, 0.95, 0);
  EXPECT_EQ(zero_floor.ratio, 1);
  EXPECT_EQ(zero_floor.low, 1);
  EXPECT_EQ(zero_floor.high, 1);
}

TEST(RankTestRatio, OneRunASideSpansTheDataAndSaysItsConfidence) {
  // One against three: 4 equally likely arrangements, k = 1, the interval is [min, max] of the
  // ratios 2, 3, 4 and misses with probability 2/4.
  const RatioEstimate r = hodges_lehmann_ratio({10}, {20, 30, 40});
  expect_relative(r.ratio, 3);
  expect_relative(r.low, 2);
  expect_relative(r.high, 4);
  expect_relative(r.confidence, 0.5);
  const RatioEstimate one = hodges_lehmann_ratio({10}, {25});
  expect_relative(one.low, 2.5);
  expect_relative(one.high, 2.5);
  EXPECT_EQ(one.confidence, 0);
  EXPECT_EQ(hodges_lehmann_ratio({}, {1, 2}).confidence, 0);
}

TEST(RankTestRatio, ExactUpToFiftyRunsNormalBeyond) {
  // hl([1000 + (i * 7919) % 1009 for i in range(50)], [1300 + (j * 104729) % 1013 + 0.5 for j
  //   in range(50)]) -> (1.1769248284449523, 1.0907222548443922, 1.27456647398844,
  //   0.9504522764011537), k = 966 (the normal index agrees: 966, 0.95015...)
  const RatioEstimate fifty = hodges_lehmann_ratio(scattered_base(50), scattered_changed(50, 1300));
  expect_relative(fifty.ratio, 1.1769248284449523);
  expect_relative(fifty.low, 1.0907222548443922);
  expect_relative(fifty.high, 1.27456647398844);
  expect_relative(fifty.confidence, 0.9504522764011537);
  // The same for range(54), exact=False -> (1.1748757665079341, 1.0907222548443922,
  //   1.2726409119696014, 0.9503717738952262), k = ceil(mn/2 - 1.96 σ - 0.5) = 1139, as the
  //   exact rank (0.95065...); without the continuity correction k would be 1140 and the
  //   interval [1.0913072776280324, 1.2722616233254536] narrower than the exact one.
  const RatioEstimate beyond =
      hodges_lehmann_ratio(scattered_base(54), scattered_changed(54, 1300));
  expect_relative(beyond.ratio, 1.1748757665079341);
  expect_relative(beyond.low, 1.0907222548443922);
  expect_relative(beyond.high, 1.2726409119696014);
  expect_relative(beyond.confidence, 0.9503717738952262);
}

TEST(RankTestRatio, OtherLevelsMoveTheRank) {
  // hl([100 + (i * 37) % 101 for i in range(10)], [120 + (j * 53) % 103 + 0.5 for j in
  //   range(20)], conf=0.9) -> (1.1023692266556582, 0.9716494845360825, 1.286363636363636,
  //   0.9004234812330765), k = 63
  std::vector<double> base, changed;
  for (int i = 0; i < 10; ++i) base.push_back(100 + (i * 37) % 101);
  for (int j = 0; j < 20; ++j) changed.push_back(120 + (j * 53) % 103 + 0.5);
  const RatioEstimate r = hodges_lehmann_ratio(base, changed, 0.90);
  expect_relative(r.ratio, 1.1023692266556582);
  expect_relative(r.low, 0.9716494845360825);
  expect_relative(r.high, 1.286363636363636);
  expect_relative(r.confidence, 0.9004234812330765);
}

}  // namespace
}  // namespace lockscope::compare
