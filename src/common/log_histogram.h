// Log-linear latency histogram with decimal boundaries, shared by the runtime (recording) and the
// analysis (percentiles, report buckets).
//
// Bucket 0 holds values <= 1 ns. Above that, each decade (1-10 ns, 10-100 ns, ... 10-100 s) is
// split into 18 linear sub-buckets of half a leading digit: (1.0, 1.5], (1.5, 2.0], ... (9.5, 10] x
// 10^d ns. Bucket bounds are upper-inclusive, so the seed report's buckets "<= 1 us, <= 10 us, <=
// 100 us,
// <= 1000 us, > 1000 us" are exact sums of whole buckets, and any percentile is known to within
// half a leading digit (<= 50% relative error at 1.x, <= 5.6% at 9.x; report it as the bucket's
// upper bound or interpolate). The last bucket collects everything above 100 s.
#pragma once

#include <cstdint>

namespace lockscope {

struct LogHistogramLayout {
  static constexpr int kDecades = 11;  // 10^0 .. 10^11 ns
  static constexpr int kSubBuckets = 18;
  static constexpr int kBuckets = 1 + kDecades * kSubBuckets + 1;  // 200
  static constexpr uint64_t kPow10[kDecades + 1] = {
      1ull,       10ull,       100ull,       1000ull,       10000ull,       100000ull,
      1000000ull, 10000000ull, 100000000ull, 1000000000ull, 10000000000ull, 100000000000ull};
  static constexpr double kInversePow10[kDecades + 1] = {1e0,  1e-1, 1e-2, 1e-3, 1e-4,  1e-5,
                                                         1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11};

  // Bucket index of a duration in nanoseconds. Allocation-free, branch-light and division-free:
  // used on the runtime's hot path for every timed wait and hold.
  static int bucket_of(uint64_t ns) {
    if (ns <= 1) return 0;
    const uint64_t u = ns - 1;  // upper-inclusive bounds: bucket (lo, hi] of ns is [lo, hi) of ns-1
    if (u >= kPow10[kDecades]) return kBuckets - 1;
    // log10 estimate from the bit length, corrected by one comparison.
    const int bits = 64 - __builtin_clzll(u);  // u >= 1
    int decade = (bits - 1) * 1233 >> 12;      // floor(log10(2^(bits-1)))
    if (decade + 1 <= kDecades && u >= kPow10[decade + 1]) ++decade;
    // sub = floor(2u / 10^decade) - 2 in [0, 18): estimated in floating point, then made exact
    // with integer comparisons (a 64-bit div costs ~40 cycles).
    const uint64_t twice = u * 2;
    int sub = static_cast<int>(static_cast<double>(twice) * kInversePow10[decade]) - 2;
    if (sub < 0) sub = 0;
    if (sub > kSubBuckets - 1) sub = kSubBuckets - 1;
    if (static_cast<uint64_t>(sub + 2) * kPow10[decade] > twice)
      --sub;
    else if (sub + 1 < kSubBuckets && static_cast<uint64_t>(sub + 3) * kPow10[decade] <= twice)
      ++sub;
    return 1 + decade * kSubBuckets + sub;
  }

  // Inclusive upper bound of a bucket, in ns (the last bucket reports its lower bound).
  static constexpr uint64_t upper_ns(int bucket) {
    if (bucket <= 0) return 1;
    if (bucket >= kBuckets - 1) return kPow10[kDecades];
    const int decade = (bucket - 1) / kSubBuckets;
    const int sub = (bucket - 1) % kSubBuckets;
    return (kPow10[decade] * static_cast<uint64_t>(sub + 3) + 1) / 2;  // ceil: exact below 10 ns
  }

  // Exclusive lower bound of a bucket, in ns.
  static constexpr uint64_t lower_ns(int bucket) {
    if (bucket <= 0) return 0;
    if (bucket >= kBuckets - 1) return kPow10[kDecades];
    const int decade = (bucket - 1) / kSubBuckets;
    const int sub = (bucket - 1) % kSubBuckets;
    return (kPow10[decade] * static_cast<uint64_t>(sub + 2) + 1) / 2;
  }
};

}  // namespace lockscope
