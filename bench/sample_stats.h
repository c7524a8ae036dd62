// Summary statistics over a vector of samples, for the lab (`lockscope bench`) alone.
//
// Everything is computed from a copy sorted once; percentiles interpolate linearly between closest
// ranks (the "R-7"/NumPy default), so the median of an even count is the mean of the middle two.
// The standard deviation is the sample one (n − 1). Outliers follow hyperfine: |modified z-score|
// > 3.5, using the median absolute deviation. A ratio of two means carries a first-order propagated
// uncertainty: σ_r / r = sqrt((σ_a/a)² + (σ_b/b)²) — what "1.42 ± 0.03× faster than" prints.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace lockscope::stats {

// q in [0, 1] over an already sorted, non-empty vector.
inline double percentile_of_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("percentile of no samples");
  q = std::clamp(q, 0.0, 1.0);
  const double rank = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(rank));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (rank - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

inline double percentile(std::vector<double> samples, double q) {
  std::sort(samples.begin(), samples.end());
  return percentile_of_sorted(samples, q);
}

inline double mean(const std::vector<double>& samples) {
  if (samples.empty()) throw std::invalid_argument("mean of no samples");
  return std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
}

// Sample standard deviation; 0 for fewer than two samples.
inline double stddev(const std::vector<double>& samples) {
  if (samples.size() < 2) return 0.0;
  const double m = mean(samples);
  double sum_sq = 0.0;
  for (double x : samples) sum_sq += (x - m) * (x - m);
  return std::sqrt(sum_sq / static_cast<double>(samples.size() - 1));
}

inline std::size_t count_outliers(const std::vector<double>& samples) {
  if (samples.size() < 3) return 0;
  const double median = percentile(samples, 0.5);
  std::vector<double> deviations;
  deviations.reserve(samples.size());
  for (double x : samples) deviations.push_back(std::abs(x - median));
  const double mad = percentile(deviations, 0.5);
  if (mad == 0.0) return 0;  // over half the samples identical: nothing is "far" in MAD units
  constexpr double kConsistency = 0.6745;  // makes MAD comparable to σ for normal data
  constexpr double kThreshold = 3.5;
  return static_cast<std::size_t>(std::count_if(samples.begin(), samples.end(), [&](double x) {
    return std::abs(kConsistency * (x - median) / mad) > kThreshold;
  }));
}

struct SampleSummary {
  std::size_t count = 0;
  double min = 0, max = 0, mean = 0, stddev = 0, median = 0, p90 = 0, p99 = 0;
  std::size_t outliers = 0;
};

inline SampleSummary summarize(const std::vector<double>& samples) {
  if (samples.empty()) throw std::invalid_argument("summary of no samples");
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  SampleSummary s;
  s.count = sorted.size();
  s.min = sorted.front();
  s.max = sorted.back();
  s.mean = stats::mean(sorted);
  s.stddev = stats::stddev(sorted);
  s.median = percentile_of_sorted(sorted, 0.5);
  s.p90 = percentile_of_sorted(sorted, 0.9);
  s.p99 = percentile_of_sorted(sorted, 0.99);
  s.outliers = count_outliers(sorted);
  return s;
}

// a / b with its propagated uncertainty. For "how many times faster is a than b" pass throughputs
// (or b's time over a's time).
struct RelativeRatio {
  double ratio = 0;
  double uncertainty = 0;
};

inline RelativeRatio relative_ratio(double a_mean, double a_stddev, double b_mean,
                                    double b_stddev) {
  if (b_mean == 0.0 || a_mean == 0.0) throw std::invalid_argument("ratio with a zero mean");
  const double r = a_mean / b_mean;
  const double rel = std::hypot(a_stddev / a_mean, b_stddev / b_mean);
  return {r, std::abs(r) * rel};
}

inline RelativeRatio relative_ratio(const SampleSummary& a, const SampleSummary& b) {
  return relative_ratio(a.mean, a.stddev, b.mean, b.stddev);
}

}  // namespace lockscope::stats
