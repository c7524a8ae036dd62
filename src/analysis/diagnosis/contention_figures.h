// Figures and thresholds shared by the contention family's rules (contention_rules.cpp,
// placement_rules.cpp): which locks they look at, a lock's rates and typical hold, the time of the
// threads that took locks, and how a finding names a lock within a title's width.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/diagnosis/finding.h"
#include "analysis/duration_format.h"
#include "analysis/profile_model.h"

namespace lockscope {

class ProfileViews;

// A finding of this family is worth a line only when its time at stake is at least this share of
// its process's thread time: the verdict's lower band (kVerdictMinor, verdict_rule.cpp), below
// which removing the cause would not change a run measurably (one run's noise is several %).
inline constexpr double kMaterialShare = 0.01;
// SyncPerf (Alam et al., EuroSys 2017) sorts locks into quadrants by conflict rate (contended
// acquisitions / acquisitions: 5 % and above is "contended") and by acquisition frequency (1 per
// ms and above is "frequent"). Its thresholds, used as they are.
inline constexpr double kConflictRate = 0.05;
inline constexpr double kFrequentPerMs = 1.0;
// A title fits the first screen's 80 columns with the finding's indent (docs/cli.md).
inline constexpr size_t kTitleColumns = 76;

// The lock primitives (mutex, rwlock, spinlock): what these rules are about; condvars,
// semaphores and barriers are the event family's.
bool is_lock_primitive(const LockSummary& lock);
// Contended acquisitions / acquisitions (0 when never acquired).
double conflict_rate(const LockSummary& lock);
// Acquisitions per millisecond of the process's run.
double acquisitions_per_ms(const LockSummary& lock, const ProcessProfile& process);
// The median of its timed holds, from its hold histogram (0: none timed).
uint64_t median_hold_ns(const LockSummary& lock);
// A site's mean hold: its hold time (an estimate when holds were sampled) over its acquisitions.
uint64_t mean_hold_ns(const SiteSummary& site);

// The threads of a process that took a lock (ThreadSummary::acquisitions > 0), and their time
// added up: what a lock's waits are a share of. A superset of any one lock's threads (the profile
// does not say which thread took which lock) and each counted for its whole run when its lifetime
// is not known, so a share of it is a lower bound.
struct LockingThreads {
  size_t count = 0;
  uint64_t time_ns = 0;
  bool lifetimes_known = true;
};
LockingThreads locking_threads(const ProcessProfile& process);

// The time at stake is material in `process` (kMaterialShare of its thread time).
bool material(uint64_t time_at_stake_ns, const ProfileViews& views, size_t process);

// The lock's name for a title that must fit `columns` with `rest` columns of other text: its
// name, or when that is too long and the name is a source line's label, the function and the
// file's base name ("serve_requests kvcache_demo.cpp:83").
std::string title_name(const LockSummary& lock, size_t rest);
// A site's label, short: its function and the base name of its file.
std::string short_site(const CodeLocation& site);

// A time in ns as format_duration_ns writes it.
inline std::string duration(uint64_t ns) {
  return format_duration_ns(double(ns));
}

}  // namespace lockscope
