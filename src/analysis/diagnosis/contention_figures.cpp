#include "analysis/diagnosis/contention_figures.h"

#include <fmt/core.h>

#include "analysis/lock_kinds.h"
#include "analysis/lock_names.h"
#include "analysis/profile_symbolization.h"
#include "analysis/profile_views.h"

namespace lockscope {

bool is_lock_primitive(const LockSummary& lock) {
  return is_lock_primitive(lock.primitive);
}

double conflict_rate(const LockSummary& lock) {
  return lock.acquisitions == 0 ? 0 : double(lock.contended) / double(lock.acquisitions);
}

double acquisitions_per_ms(const LockSummary& lock, const ProcessProfile& process) {
  if (process.duration_ns == 0) return 0;
  return double(lock.acquisitions) / (double(process.duration_ns) / 1e6);
}

uint64_t median_hold_ns(const LockSummary& lock) {
  return lock.hold.empty() ? 0 : uint64_t(lock.hold.percentile(0.5));
}

uint64_t mean_hold_ns(const SiteSummary& site) {
  const uint64_t acquisitions = site.acquisitions();
  return acquisitions == 0 ? 0 : site.hold_sum_ns / acquisitions;
}

LockingThreads locking_threads(const ProcessProfile& process) {
  LockingThreads threads;
  for (const ThreadSummary& thread : process.threads) {
    // A thread blocked until exit acquired nothing, and its wait is in the lock's: it counts.
    if (thread.acquisitions == 0 && thread.failed == 0 && thread.wait_sum_ns == 0) continue;
    bool known = false;
    threads.time_ns += thread_lifetime_ns(process, thread, known);
    threads.lifetimes_known &= known;
    ++threads.count;
  }
  return threads;
}

bool material(uint64_t time_at_stake_ns, const ProfileViews& views, size_t process) {
  const uint64_t thread_ns = views.processes()[process].thread_time_ns;
  return thread_ns > 0 && double(time_at_stake_ns) >= kMaterialShare * double(thread_ns);
}

std::string short_site(const CodeLocation& site) {
  if (site.file.empty() || site.line == 0) return site.label;
  const size_t slash = site.file.rfind('/');
  const std::string base = slash == std::string::npos ? site.file : site.file.substr(slash + 1);
  return fmt::format("{} {}:{}", site.function.empty() ? "?" : short_function_name(site.function),
                     base, site.line);
}

std::string title_name(const LockSummary& lock, size_t rest) {
  const std::string name = lock_name(lock);
  if (name.size() + rest <= kTitleColumns) return name;
  switch (lock.name_source) {
    case LockNameSource::kInitSite:
      return short_site(lock.init_site);
    case LockNameSource::kFirstUse:
      return short_site(lock.first_use_site);
    default:
      return name;
  }
}

}  // namespace lockscope
