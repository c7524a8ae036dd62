// The statistics of `lockscope diff` and of repeated runs: whether two sets of per-run values
// differ (Mann-Whitney U, benchstat's test) and by what factor (the Hodges-Lehmann estimate of
// the ratio with its confidence interval, the interval that goes with the U test).
//
// Runs of a program are few (5 to 30) and far from normal (a lock wait is a heavy-tailed figure),
// so both are rank statistics: no assumption about the distribution, no mean.
#pragma once

#include <cstddef>
#include <vector>

namespace lockscope::compare {

// Fewer runs than this on either side: no test ("n too small", as benchstat says).
inline constexpr std::size_t kMinRunsForTest = 5;

struct RankTest {
  double u = 0;        // U of the first sample: pairs (x_i, y_j) with x_i > y_j, ties counted 1/2
  double p_value = 1;  // two-sided
  bool exact = false;  // from the exact distribution of U (no ties); else the normal
                       // approximation with the tie correction and a continuity correction
};

// Mann-Whitney U test of samples x and y (each non-empty), two-sided. Exact when there are no
// ties and both samples are at most kMaxExactRuns long; else asymptotic (scipy.stats.mannwhitneyu
// with method="exact" and method="asymptotic", use_continuity=True, give the same numbers).
inline constexpr std::size_t kMaxExactRuns = 50;
RankTest mann_whitney(const std::vector<double>& x, const std::vector<double>& y);

// new / base as a factor: the Hodges-Lehmann estimate (the median of every pairwise ratio
// changed_j / base_i) and its confidence interval (the ratios at the ranks the U distribution's
// critical value gives; Bauer 1972, as R's wilcox.test(conf.int=TRUE) computes it, on the
// logarithms). Values below `floor`, 0 in particular, are taken as `floor` (a count of 0 against
// 1,000 is "at least 1,000 times fewer", not a division by 0). A floor of 0 or less acts as the
// smallest normal double: 0 against 0 is still a ratio of 1, never NaN.
//
// The interval is [d_(k), d_(mn-k+1)] of the m*n sorted log ratios, k = qwilcox(α/2, m, n) (0
// taken as 1), as R's wilcox.test(exact = TRUE) does it, when both sides have at most
// kMaxExactRuns values (ties or not: the ranks of the order statistics do not depend on them);
// beyond that, k from the normal approximation of U with a continuity correction. The even
// count's median is the geometric mean of the two middle ratios.
//
// Few runs cannot reach the level asked for: then k = 1, the interval spans the smallest to the
// largest ratio, and `confidence` says what it achieves (1 - 2 / C(m+n, m): 0.5 for one run
// against three, 0 for one against one, where low = ratio = high). An empty side: ratio 1,
// interval [1, 1], confidence 0.
struct RatioEstimate {
  double ratio = 1;
  double low = 1;  // the interval's ends (low <= ratio <= high)
  double high = 1;
  double confidence = 0.95;  // achieved level: at least the one asked for when there are runs
                             // enough, less when there are not (see above)
};
RatioEstimate hodges_lehmann_ratio(const std::vector<double>& base,
                                   const std::vector<double>& changed, double confidence = 0.95,
                                   double floor = 1.0);

}  // namespace lockscope::compare
