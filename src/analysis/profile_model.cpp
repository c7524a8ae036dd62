#include "analysis/profile_model.h"

#include <algorithm>
#include <cmath>

namespace lockscope {

uint64_t LatencyHistogram::count(int bucket) const {
  auto it = std::lower_bound(bins_.begin(), bins_.end(), bucket,
                             [](const Bin& bin, int b) { return bin.bucket < b; });
  return it != bins_.end() && it->bucket == bucket ? it->count : 0;
}

void LatencyHistogram::add(int bucket, uint64_t count) {
  if (count == 0) return;
  // Buckets mostly come in ascending order (the file stores them so): append then.
  if (bins_.empty() || bins_.back().bucket < bucket) {
    bins_.push_back(Bin{count, static_cast<uint16_t>(bucket)});
    return;
  }
  auto it = std::lower_bound(bins_.begin(), bins_.end(), bucket,
                             [](const Bin& bin, int b) { return bin.bucket < b; });
  if (it != bins_.end() && it->bucket == bucket)
    it->count += count;
  else
    bins_.insert(it, Bin{count, static_cast<uint16_t>(bucket)});
}

void LatencyHistogram::add(const LatencyHistogram& other) {
  if (other.bins_.empty()) return;
  if (bins_.empty()) {
    bins_ = other.bins_;
    return;
  }
  std::vector<Bin> merged;
  merged.reserve(std::min<size_t>(bins_.size() + other.bins_.size(), LogHistogramLayout::kBuckets));
  auto a = bins_.cbegin(), b = other.bins_.cbegin();
  while (a != bins_.cend() || b != other.bins_.cend()) {
    if (b == other.bins_.cend() || (a != bins_.cend() && a->bucket < b->bucket)) {
      merged.push_back(*a++);
    } else if (a == bins_.cend() || b->bucket < a->bucket) {
      merged.push_back(*b++);
    } else {
      merged.push_back(Bin{a->count + b->count, a->bucket});
      ++a;
      ++b;
    }
  }
  bins_ = std::move(merged);
}

uint64_t LatencyHistogram::total() const {
  uint64_t sum = 0;
  for (const Bin& bin : bins_) sum += bin.count;
  return sum;
}

uint64_t LatencyHistogram::count_in(uint64_t lower_ns, uint64_t upper_ns) const {
  uint64_t sum = 0;
  for (const Bin& bin : bins_) {
    const uint64_t upper = LogHistogramLayout::upper_ns(bin.bucket);
    const uint64_t lower = LogHistogramLayout::lower_ns(bin.bucket);
    if (lower >= lower_ns && upper <= upper_ns) sum += bin.count;
  }
  return sum;
}

double LatencyHistogram::percentile(double q) const {
  const uint64_t n = total();
  if (n == 0) return 0;
  const double rank = std::clamp(q, 0.0, 1.0) * static_cast<double>(n);
  double seen = 0;
  for (const Bin& bin : bins_) {
    const double next = seen + static_cast<double>(bin.count);
    if (next >= rank) {
      if (bin.bucket == 0) return 0;  // no wait (uncontended) or <= 1 ns
      const double lower = static_cast<double>(LogHistogramLayout::lower_ns(bin.bucket));
      const double upper = static_cast<double>(LogHistogramLayout::upper_ns(bin.bucket));
      const double fraction = (rank - seen) / static_cast<double>(bin.count);
      return lower + (upper - lower) * fraction;
    }
    seen = next;
  }
  return static_cast<double>(LogHistogramLayout::upper_ns(LogHistogramLayout::kBuckets - 1));
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

void SideSummary::add(const SiteSummary& site) {
  acquisitions += site.count - site.failed;
  contended += site.contended;
  failed += site.failed;
  wait_sum_ns += site.wait_sum_ns;
  wait_max_ns = std::max(wait_max_ns, site.wait_max_ns);
  hold_sum_ns += site.hold_sum_ns;
  // Independent sampling errors add in quadrature.
  hold_error_ns =
      static_cast<uint64_t>(std::hypot(double(hold_error_ns), double(site.hold_error_ns)));
  hold_max_ns = std::max(hold_max_ns, site.hold_max_ns);
  wait.add(site.wait);
  hold.add(site.hold);
  cross_cpu_handoffs += site.cross_cpu_handoffs;
  same_cpu_handoffs += site.same_cpu_handoffs;
}

void SideSummary::finish() {
  waits_only = wait;
  wait.add(0, acquisitions - std::min(acquisitions, contended));
}

void LockSummary::finish() {
  static_cast<SideSummary&>(*this) = {};
  read_side = {};
  write_side = {};
  releases = events = reacquisitions = reacquire_wait_ns = wakeups = wake_latency_ns = 0;
  LatencyHistogram reacquire_waits;
  for (const SiteSummary& site : sites) {
    if (site.operation == format::Operation::kCondReacquire) {
      // A mutex wait, but not a call of the program: its time joins the lock's waits, its count
      // stays apart from the acquisitions.
      reacquisitions += site.count;
      reacquire_wait_ns += site.wait_sum_ns;
      wait_sum_ns += site.wait_sum_ns;
      wait_max_ns = std::max(wait_max_ns, site.wait_max_ns);
      reacquire_waits.add(site.wait);
      continue;
    }
    if (site.operation == format::Operation::kCondWake) {
      // Not a wait for the condition, nor a call of its own: the wake-up latency of the waits.
      wakeups += site.count;
      wake_latency_ns += site.wait_sum_ns;
      continue;
    }
    if (counts_as_acquisition(site.operation)) {
      add(site);
      if (format::is_read_side(site.operation)) read_side.add(site);
      if (format::is_write_side(site.operation)) write_side.add(site);
    } else if (format::operation_class(site.operation) == format::OperationClass::kRelease) {
      releases += site.count - site.failed;
    } else {
      events += site.count;
    }
  }
  SideSummary::finish();
  wait.add(reacquire_waits);
  waits_only.add(reacquire_waits);
  read_side.finish();
  write_side.finish();
}

bool counts_as_acquisition(format::Operation operation) {
  if (operation == format::Operation::kCondReacquire || operation == format::Operation::kCondWake)
    return false;
  const format::OperationClass kind = format::operation_class(operation);
  return kind == format::OperationClass::kAcquire || kind == format::OperationClass::kWait;
}

std::string operation_name(format::Operation operation) {
  switch (operation) {
    case format::Operation::kLock:
      return "lock";
    case format::Operation::kTryLock:
      return "trylock";
    case format::Operation::kTimedLock:
      return "timedlock";
    case format::Operation::kClockLock:
      return "clocklock";
    case format::Operation::kUnlock:
      return "unlock";
    case format::Operation::kReadLock:
      return "rdlock";
    case format::Operation::kTryReadLock:
      return "tryrdlock";
    case format::Operation::kTimedReadLock:
      return "timedrdlock";
    case format::Operation::kClockReadLock:
      return "clockrdlock";
    case format::Operation::kWriteLock:
      return "wrlock";
    case format::Operation::kTryWriteLock:
      return "trywrlock";
    case format::Operation::kTimedWriteLock:
      return "timedwrlock";
    case format::Operation::kClockWriteLock:
      return "clockwrlock";
    case format::Operation::kReadUnlock:
      return "rdunlock";
    case format::Operation::kWriteUnlock:
      return "wrunlock";
    case format::Operation::kCondWait:
      return "wait";
    case format::Operation::kCondTimedWait:
      return "timedwait";
    case format::Operation::kCondClockWait:
      return "clockwait";
    case format::Operation::kCondSignal:
      return "signal";
    case format::Operation::kCondBroadcast:
      return "broadcast";
    case format::Operation::kCondReacquire:
      return "cond-reacquire";
    case format::Operation::kCondWake:
      return "cond-wake";
    case format::Operation::kSpinLock:
      return "spin_lock";
    case format::Operation::kSpinTryLock:
      return "spin_trylock";
    case format::Operation::kSemWait:
      return "sem_wait";
    case format::Operation::kSemTryWait:
      return "sem_trywait";
    case format::Operation::kSemTimedWait:
      return "sem_timedwait";
    case format::Operation::kSemClockWait:
      return "sem_clockwait";
    case format::Operation::kSemPost:
      return "sem_post";
    case format::Operation::kBarrierWait:
      return "barrier_wait";
  }
  return "op" + std::to_string(static_cast<int>(operation));
}

std::string primitive_name(format::Primitive primitive) {
  switch (primitive) {
    case format::Primitive::kMutex:
      return "mutex";
    case format::Primitive::kRwLock:
      return "rwlock";
    case format::Primitive::kCondVar:
      return "condvar";
    case format::Primitive::kSpinLock:
      return "spinlock";
    case format::Primitive::kSemaphore:
      return "semaphore";
    case format::Primitive::kBarrier:
      return "barrier";
  }
  return "primitive" + std::to_string(static_cast<int>(primitive));
}

std::string lock_kind_name(const LockSummary& lock) {
  if (lock.primitive != format::Primitive::kMutex) {
    std::string name = primitive_name(lock.primitive);
    if (lock.primitive == format::Primitive::kBarrier && lock.capacity)
      name += "(" + std::to_string(lock.capacity) + ")";
    if (lock.flags & format::kLockProcessShared) name += "+pshared";
    return name;
  }
  const uint32_t flags = lock.flags;
  std::string name;
  switch (lock.kind) {
    case format::MutexKind::kUnknown:
      name = "mutex";
      break;
    case format::MutexKind::kNormal:
      name = "mutex";
      break;
    case format::MutexKind::kRecursive:
      name = "mutex/recursive";
      break;
    case format::MutexKind::kErrorCheck:
      name = "mutex/errorcheck";
      break;
    case format::MutexKind::kAdaptive:
      name = "mutex/adaptive";
      break;
  }
  if (flags & format::kLockProcessShared) name += "+pshared";
  if (flags & format::kLockRobust) name += "+robust";
  if (flags & format::kLockPriorityInherit) name += "+pi";
  if (flags & format::kLockPriorityProtect) name += "+pp";
  return name;
}

std::string exit_path_name(format::ExitPath path) {
  switch (path) {
    case format::ExitPath::kExit:
      return "exit";
    case format::ExitPath::kUnderscoreExit:
      return "_exit";
    case format::ExitPath::kExec:
      return "exec";
    case format::ExitPath::kSignal:
      return "signal";
    case format::ExitPath::kQuickExit:
      return "quick_exit";
    case format::ExitPath::kSnapshot:
      return "snapshot";
  }
  return "unknown";
}

uint64_t ProcessTrace::lost() const {
  uint64_t lost = 0;
  for (const TraceThread& thread : threads) lost += thread.dropped + thread.overwritten;
  return lost;
}

std::string trace_kind_name(format::TraceKind kind) {
  switch (kind) {
    case format::TraceKind::kCall:
      return "call";
    case format::TraceKind::kWaitBegin:
      return "wait-begin";
    case format::TraceKind::kThreadStart:
      return "thread-start";
    case format::TraceKind::kThreadName:
      return "thread-name";
    case format::TraceKind::kThreadExit:
      return "thread-exit";
    case format::TraceKind::kFork:
      return "fork";
    case format::TraceKind::kExec:
      return "exec";
    case format::TraceKind::kHoldPause:
      return "hold-pause";
    case format::TraceKind::kHoldResume:
      return "hold-resume";
  }
  return "unknown";
}

std::string sched_policy_name(int32_t policy) {
  // Linux's values (<linux/sched.h>), spelled out: the report reads profiles of any machine.
  switch (policy) {
    case 0:
      return "SCHED_OTHER";
    case 1:
      return "SCHED_FIFO";
    case 2:
      return "SCHED_RR";
    case 3:
      return "SCHED_BATCH";
    case 5:
      return "SCHED_IDLE";
    case 6:
      return "SCHED_DEADLINE";
  }
  return "SCHED_" + std::to_string(policy);
}

}  // namespace lockscope
