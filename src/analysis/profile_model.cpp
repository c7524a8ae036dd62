#include "analysis/profile_model.h"

#include <algorithm>

namespace lockscope {

uint64_t LatencyHistogram::total() const {
  uint64_t sum = 0;
  for (uint64_t c : counts) sum += c;
  return sum;
}

uint64_t LatencyHistogram::count_in(uint64_t lower_ns, uint64_t upper_ns) const {
  uint64_t sum = 0;
  for (int b = 0; b < LogHistogramLayout::kBuckets; ++b) {
    const uint64_t upper = LogHistogramLayout::upper_ns(b);
    const uint64_t lower = LogHistogramLayout::lower_ns(b);
    if (lower >= lower_ns && upper <= upper_ns) sum += counts[b];
  }
  return sum;
}

double LatencyHistogram::percentile(double q) const {
  const uint64_t n = total();
  if (n == 0) return 0;
  const double rank = std::clamp(q, 0.0, 1.0) * static_cast<double>(n);
  double seen = 0;
  for (int b = 0; b < LogHistogramLayout::kBuckets; ++b) {
    if (!counts[b]) continue;
    const double next = seen + static_cast<double>(counts[b]);
    if (next >= rank) {
      if (b == 0) return 0;  // no wait (uncontended) or <= 1 ns
      const double lower = static_cast<double>(LogHistogramLayout::lower_ns(b));
      const double upper = static_cast<double>(LogHistogramLayout::upper_ns(b));
      const double fraction = (rank - seen) / static_cast<double>(counts[b]);
      return lower + (upper - lower) * fraction;
    }
    seen = next;
  }
  return static_cast<double>(LogHistogramLayout::upper_ns(LogHistogramLayout::kBuckets - 1));
}

void LatencyHistogram::add(const LatencyHistogram& other) {
  for (size_t b = 0; b < counts.size(); ++b) counts[b] += other.counts[b];
}

std::array<uint64_t, 5> report_buckets(const LatencyHistogram& histogram) {
  std::array<uint64_t, 5> out{};
  uint64_t lower = 0;
  for (size_t i = 0; i < kReportBucketBoundsNs.size(); ++i) {
    out[i] = histogram.count_in(i == 0 ? 0 : lower, kReportBucketBoundsNs[i]);
    lower = kReportBucketBoundsNs[i];
  }
  out[4] = histogram.count_in(lower, UINT64_MAX);
  return out;
}

void LockSummary::finish() {
  acquisitions = releases = contended = failed = wait_sum_ns = wait_max_ns = 0;
  hold_sum_ns = hold_max_ns = 0;
  wait = {};
  waits_only = {};
  hold = {};
  for (const SiteSummary& site : sites) {
    if (site.operation == format::Operation::kUnlock) {
      releases += site.count - site.failed;
      continue;
    }
    acquisitions += site.acquisitions();
    contended += site.contended;
    failed += site.failed;
    wait_sum_ns += site.wait_sum_ns;
    wait_max_ns = std::max(wait_max_ns, site.wait_max_ns);
    hold_sum_ns += site.hold_sum_ns;
    hold_max_ns = std::max(hold_max_ns, site.hold_max_ns);
    wait.add(site.wait);
    hold.add(site.hold);
  }
  waits_only = wait;
  wait.counts[0] += acquisitions - std::min(acquisitions, contended);
}

std::string operation_name(format::Operation operation) {
  switch (operation) {
    case format::Operation::kLock: return "lock";
    case format::Operation::kTryLock: return "trylock";
    case format::Operation::kTimedLock: return "timedlock";
    case format::Operation::kClockLock: return "clocklock";
    case format::Operation::kUnlock: return "unlock";
  }
  return "op" + std::to_string(static_cast<int>(operation));
}

std::string mutex_kind_name(format::MutexKind kind, uint32_t flags) {
  std::string name;
  switch (kind) {
    case format::MutexKind::kUnknown: name = "mutex"; break;
    case format::MutexKind::kNormal: name = "mutex"; break;
    case format::MutexKind::kRecursive: name = "mutex/recursive"; break;
    case format::MutexKind::kErrorCheck: name = "mutex/errorcheck"; break;
    case format::MutexKind::kAdaptive: name = "mutex/adaptive"; break;
  }
  if (flags & format::kLockProcessShared) name += "+pshared";
  if (flags & format::kLockRobust) name += "+robust";
  if (flags & format::kLockPriorityInherit) name += "+pi";
  if (flags & format::kLockPriorityProtect) name += "+pp";
  return name;
}

std::string exit_path_name(format::ExitPath path) {
  switch (path) {
    case format::ExitPath::kExit: return "exit";
    case format::ExitPath::kUnderscoreExit: return "_exit";
    case format::ExitPath::kExec: return "exec";
  }
  return "unknown";
}

}  // namespace lockscope
