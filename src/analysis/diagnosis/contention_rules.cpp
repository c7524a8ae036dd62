// The contention family, one lock at a time: serial-bottleneck (a lock whose waits are a large
// share of its threads' time), and what makes a lock cost: long-hold (one site's long holds),
// hot-lock (the locking itself), handoff-storm (its cache line ping-ponging between CPUs) and
// oversubscribed (holders preempted). serial-bottleneck is the symptom: it is reported only for a
// lock no cause explains (these, or asymmetric-contention's hot instances), so that one lock's wait
// is not counted at stake twice.
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "analysis/diagnosis/contention_figures.h"
#include "analysis/diagnosis/lock_pair_cost.h"
#include "analysis/diagnosis/rule_table.h"
#include "analysis/duration_format.h"
#include "analysis/lock_names.h"
#include "analysis/profile_views.h"

namespace lockscope {
namespace {

// serial-bottleneck: the verdict's "bottleneck" band (kVerdictMajor, verdict_rule.cpp) for one
// lock: its waits alone are at least 10 % of the time of the threads that took locks.
constexpr double kSerialShare = 0.10;
// ... in a queue that formed more than once or twice: a lock waited for once or twice (a timed try
// that ran out, a start-up race, threads blocked at exit) is no bottleneck, whatever share of a
// short run those waits are. Not more: glibc's mutex lets the releasing thread take it again at
// once, so threads that take turns on a lock wait few times, each for long (the rule's fixture:
// 6 to 26 contended acquisitions of 90, 200 ms of waits, from one run to the next).
constexpr uint64_t kSerialMinContended = 3;

// long-hold: "most" of a lock's waits are behind one site's holds (more than half of its wait
// time), and that site's mean hold is an order of magnitude above the lock's typical hold, the
// median of its other sites' holds (holds of one code path spread by a few times with cache
// misses; ten times is another kind of work).
constexpr double kLongHoldBlameShare = 0.5;
constexpr double kLongHoldFactor = 10;

// handoff-storm: at least every other acquisition takes the lock from another thread (two
// threads taking turns at random change owners on half their acquisitions; more threads, more),
// most of those whose CPU is known came from another CPU, and the median hold is under 1 µs: a
// one-way cache-line transfer costs 90 ns on the lab's 2-CPU guest (bench/results, `lockscope
// bench c2c`), so a shorter hold than ~10 transfers is of the order of the line's move itself.
constexpr double kHandoffShare = 0.5;
constexpr double kCrossCpuShare = 0.5;
constexpr uint64_t kShortHoldNs = 1000;
constexpr double kStormAcquisitionsPerThread = 10;

// oversubscribed: a wait longer than a full queue of the holds behind it (every other thread
// holding once, each for the mean hold of the holds waited behind) by ten times, and longer than
// 100 µs, is not explained by holds: its holder (or the waiter, once woken) waited for a CPU.
// 100 µs is an order of magnitude above an idle machine's futex wake-up (a few µs) and below the
// scheduler's slice (0.75 ms and more: CFS's min granularity, EEVDF's base slice) that a preempted
// holder makes its waiters wait. The lock is oversubscribed when most of its wait time is in such
// waits, and they are at least ten: the machine's other load preempts a thread now and then in
// any run (on the 2-CPU test guest, under parallel builds, the fixtures of two threads show one to
// three such waits a run); ten or more is the program's own threads outnumbering its CPUs.
constexpr double kWaitOverHold = 10;
constexpr uint64_t kPreemptedWaitNs = 100'000;
constexpr double kUnexplainedShare = 0.5;
constexpr uint64_t kMinLongWaits = 10;
// ... and a holder was preempted: some of its holds are longer than 100 µs and ten times the mean
// hold behind the waits (a critical section of its usual length does not take that long unless
// its thread lost the CPU). Without one, the long waits were woken waiters waiting for a CPU while
// the lock was free, which is the machine's load rather than the lock (a handoff storm on a busy
// machine shows that).
constexpr uint64_t kMinPreemptedHolds = 1;

// The acquire sites of a lock, at most `limit`, by `key` (most first), those with key > 0.
template <typename Key>
std::vector<CodeLocation> sites_by(const LockSummary& lock, Key key, size_t limit = 3) {
  std::vector<const SiteSummary*> sites;
  for (const SiteSummary& site : lock.sites)
    if (counts_as_acquisition(site.operation) && key(site) > 0) sites.push_back(&site);
  std::stable_sort(sites.begin(), sites.end(),
                   [&](const SiteSummary* a, const SiteSummary* b) { return key(*a) > key(*b); });
  std::vector<CodeLocation> out;
  for (size_t i = 0; i < sites.size() && i < limit; ++i) out.push_back(sites[i]->location);
  return out;
}
std::vector<CodeLocation> waiting_sites(const LockSummary& lock) {
  return sites_by(lock, [](const SiteSummary& site) { return site.wait_sum_ns; });
}
std::vector<CodeLocation> busiest_sites(const LockSummary& lock) {
  return sites_by(lock, [](const SiteSummary& site) { return site.acquisitions(); });
}

bool same_location(const CodeLocation& a, const CodeLocation& b) {
  return a.module == b.module && a.offset == b.offset;
}

// The lock's acquire site at `where`, or nullptr.
const SiteSummary* acquire_site_at(const LockSummary& lock, const CodeLocation& where) {
  if (!where.known()) return nullptr;
  for (const SiteSummary& site : lock.sites)
    if (format::is_acquire(site.operation) && same_location(site.location, where)) return &site;
  return nullptr;
}

struct LongHold {
  const SiteSummary* site = nullptr;  // the acquire site of the long holds
  uint64_t blamed_ns = 0;             // the lock's waits behind them
  uint64_t blamed_waits = 0;
  uint64_t typical_hold_ns = 0;  // the median hold of the lock's other sites
};

std::optional<LongHold> long_hold_of(const LockSummary& lock) {
  if (lock.wait_sum_ns == 0) return std::nullopt;
  std::map<std::pair<uint32_t, uint64_t>, LongHold> by_holder;
  for (const SiteSummary& waiter : lock.sites)
    for (const Blame& row : waiter.blame) {
      const SiteSummary* holder = acquire_site_at(lock, row.holder_site);
      if (holder == nullptr) continue;
      LongHold& entry = by_holder[{holder->location.module, holder->location.offset}];
      entry.site = holder;
      entry.blamed_ns += row.wait_ns;
      entry.blamed_waits += row.waits;
    }
  const LongHold* top = nullptr;
  for (const auto& [key, entry] : by_holder)
    if (top == nullptr || entry.blamed_ns > top->blamed_ns) top = &entry;
  if (top == nullptr || double(top->blamed_ns) <= kLongHoldBlameShare * double(lock.wait_sum_ns))
    return std::nullopt;
  LongHold found = *top;
  // The lock's typical hold: the median of its other sites' holds. Not the whole lock's: the site
  // is then compared with itself, and a site whose few holds were preempted has a mean far above
  // its own median.
  LatencyHistogram others;
  for (const SiteSummary& site : lock.sites)
    if (counts_as_acquisition(site.operation) && &site != found.site) others.add(site.hold);
  if (others.empty()) return std::nullopt;
  found.typical_hold_ns = std::max<uint64_t>(uint64_t(others.percentile(0.5)), 1);
  if (double(mean_hold_ns(*found.site)) < kLongHoldFactor * double(found.typical_hold_ns))
    return std::nullopt;
  return found;
}

bool is_handoff_storm(const LockSummary& lock, const ProcessProfile& process) {
  if (lock.acquisitions == 0 || acquisitions_per_ms(lock, process) < kFrequentPerMs) return false;
  // The same threads pass it back and forth: each thread that took locks took it ten times on
  // average at least. Thousands of short-lived threads that each take a lock once (the
  // many_threads fixture) also change its owner every time, and batching would not help them.
  const LockingThreads threads = locking_threads(process);
  if (double(lock.acquisitions) < kStormAcquisitionsPerThread * double(threads.count)) return false;
  if (double(lock.owner_changes) < kHandoffShare * double(lock.acquisitions)) return false;
  const uint64_t known = lock.cross_cpu_handoffs + lock.same_cpu_handoffs;
  if (known == 0 || double(lock.cross_cpu_handoffs) < kCrossCpuShare * double(known)) return false;
  return !lock.hold.empty() && median_hold_ns(lock) <= kShortHoldNs;
}

struct Oversubscription {
  uint64_t mean_wait_ns = 0;
  uint64_t hold_behind_ns = 0;     // the mean hold of the holds waited behind
  size_t queue = 0;                // the most holds a wait can queue behind: the other threads
  uint64_t threshold_ns = 0;       // waits longer than this are not explained by holds
  uint64_t long_waits = 0;         // waits surely longer than it
  uint64_t excess_ns = 0;          // time surely in such waits: what the holds do not explain
  uint64_t preempted_holds = 0;    // holds surely longer than 100 µs and ten times the mean
  uint64_t preempted_hold_ns = 0;  // ... that length
};

std::optional<Oversubscription> oversubscription_of(const LockSummary& lock,
                                                    const ProcessProfile& process) {
  const uint64_t waits = lock.waits_only.total();
  if (waits == 0 || lock.wait_sum_ns == 0) return std::nullopt;
  Oversubscription found;
  found.mean_wait_ns = lock.wait_sum_ns / waits;
  // The holds behind the waits: each blamed wait at the mean hold of its holder's site.
  double behind_ns = 0, behind_waits = 0;
  for (const SiteSummary& waiter : lock.sites)
    for (const Blame& row : waiter.blame)
      if (const SiteSummary* holder = acquire_site_at(lock, row.holder_site)) {
        behind_ns += double(row.waits) * double(mean_hold_ns(*holder));
        behind_waits += double(row.waits);
      }
  found.hold_behind_ns = behind_waits > 0
                             ? uint64_t(behind_ns / behind_waits)
                             : (lock.acquisitions == 0 ? 0 : lock.hold_sum_ns / lock.acquisitions);
  const size_t threads = locking_threads(process).count;
  found.queue = threads > 1 ? threads - 1 : 1;
  found.threshold_ns = std::max<uint64_t>(
      uint64_t(kWaitOverHold * double(found.queue) * double(found.hold_behind_ns)),
      kPreemptedWaitNs);
  // Every wait in a bucket that reaches down to the threshold counts as a short one at its
  // bucket's top: what remains of the wait time was surely spent in longer waits.
  uint64_t short_bound_ns = 0;
  for (const LatencyHistogram::Bin& bin : lock.waits_only.bins()) {
    if (LogHistogramLayout::lower_ns(bin.bucket) < found.threshold_ns)
      short_bound_ns += bin.count * LogHistogramLayout::upper_ns(bin.bucket);
    else
      found.long_waits += bin.count;
  }
  found.excess_ns = lock.wait_sum_ns > short_bound_ns ? lock.wait_sum_ns - short_bound_ns : 0;
  found.preempted_hold_ns =
      std::max<uint64_t>(kPreemptedWaitNs, uint64_t(kWaitOverHold * double(found.hold_behind_ns)));
  for (const LatencyHistogram::Bin& bin : lock.hold.bins())
    if (LogHistogramLayout::lower_ns(bin.bucket) >= found.preempted_hold_ns)
      found.preempted_holds += bin.count;
  if (found.preempted_holds < kMinPreemptedHolds || found.long_waits < kMinLongWaits ||
      double(found.excess_ns) < kUnexplainedShare * double(lock.wait_sum_ns))
    return std::nullopt;
  return found;
}

// Each detector's loop: every lock primitive of every process, with its place.
template <typename Visit>
void for_each_lock(const ProfileViews& views, Visit visit) {
  const std::vector<ProcessProfile>& processes = views.profile().processes;
  for (size_t p = 0; p < processes.size(); ++p)
    for (size_t l = 0; l < processes[p].locks.size(); ++l)
      if (is_lock_primitive(processes[p].locks[l]))
        visit(processes[p], processes[p].locks[l], FindingLock{p, l});
}

std::string cpus_text(const ProcessProfile& process) {
  return process.online_cpus == 0
             ? "the CPU count is not known (this profile does not hold it)"
             : fmt::format("{} CPU{}", process.online_cpus, process.online_cpus == 1 ? "" : "s");
}

}  // namespace

void detect_long_hold(const ProfileViews& views, std::vector<Finding>& findings) {
  for_each_lock(views, [&](const ProcessProfile&, const LockSummary& lock, FindingLock at) {
    const std::optional<LongHold> hold = long_hold_of(lock);
    if (!hold || !material(hold->blamed_ns, views, at.process)) return;
    const SiteSummary& site = *hold->site;
    const double share = double(hold->blamed_ns) / double(lock.wait_sum_ns);
    const std::string where = short_site(site.location);
    const std::string rest =
        fmt::format(": holds at {} cause {} of waits", where, format_share(share));
    Finding finding;
    finding.rule = "long-hold";
    finding.title = title_name(lock, rest.size()) + rest;
    finding.locks.push_back(at);
    finding.sites.push_back(site.location);
    for (const CodeLocation& waiter : waiting_sites(lock))
      if (!same_location(waiter, site.location)) finding.sites.push_back(waiter);
    finding.evidence = {
        {"blamed_wait_ns", double(hold->blamed_ns),
         fmt::format("{} of {} waiting for {} was behind holds taken at {}",
                     duration(hold->blamed_ns), duration(lock.wait_sum_ns), lock_name_phrase(lock),
                     site.location.label)},
        {"blamed_waits", double(hold->blamed_waits),
         fmt::format("{} of its {} contended acquisitions", format_count(hold->blamed_waits),
                     format_count(lock.contended))},
        {"site_mean_hold_ns", double(mean_hold_ns(site)),
         fmt::format("holds there average {} over {} acquisitions", duration(mean_hold_ns(site)),
                     format_count(site.acquisitions()))},
        {"site_max_hold_ns", double(site.hold_max_ns),
         fmt::format("the longest {}", duration(site.hold_max_ns))},
        {"typical_hold_ns", double(hold->typical_hold_ns),
         fmt::format("its other sites' median hold is {}", duration(hold->typical_hold_ns))},
    };
    finding.advice =
        fmt::format("move work out of the critical section at {}: its holds average {}, at most {}",
                    where, duration(mean_hold_ns(site)), duration(site.hold_max_ns));
    finding.time_at_stake_ns = hold->blamed_ns;
    findings.push_back(std::move(finding));
  });
}

void detect_hot_lock(const ProfileViews& views, std::vector<Finding>& findings) {
  for_each_lock(views, [&](const ProcessProfile& process, const LockSummary& lock, FindingLock at) {
    if (lock.acquisitions == 0 || conflict_rate(lock) >= kConflictRate) return;
    const double per_ms = acquisitions_per_ms(lock, process);
    if (per_ms < kFrequentPerMs) return;
    const double pair_ns = uncontended_pair_ns(lock.primitive);
    const uint64_t locking_ns = uint64_t(double(lock.acquisitions) * pair_ns);
    if (!material(locking_ns, views, at.process)) return;
    const std::string rest = fmt::format(": locking costs {} in {} acquisitions",
                                         duration(locking_ns), format_count(lock.acquisitions));
    Finding finding;
    finding.rule = "hot-lock";
    finding.title = title_name(lock, rest.size()) + rest;
    finding.locks.push_back(at);
    finding.sites = busiest_sites(lock);
    const char* pair = lock.primitive == format::Primitive::kRwLock     ? "pthread_rwlock_rdlock"
                       : lock.primitive == format::Primitive::kSpinLock ? "pthread_spin_lock"
                                                                        : "pthread_mutex_lock";
    finding.evidence = {
        {"acquisitions", double(lock.acquisitions),
         fmt::format("{} acquisitions of {}, {:.0f} a millisecond", format_count(lock.acquisitions),
                     lock_name_phrase(lock), per_ms)},
        {"conflict_rate", conflict_rate(lock),
         fmt::format("{} of them contended ({})", format_count(lock.contended),
                     format_share(conflict_rate(lock)))},
        {"pair_ns", pair_ns,
         fmt::format("{:.1f} ns a pair: this machine's price of an uncontended {} + unlock, "
                     "measured when the report was made",
                     pair_ns, pair)},
        {"locking_ns", double(locking_ns),
         fmt::format("{} in lock and unlock calls alone", duration(locking_ns))},
    };
    finding.advice =
        "take it less often: batch work per acquisition, keep per-thread state and merge it, or "
        "use atomics";
    finding.time_at_stake_ns = locking_ns;
    findings.push_back(std::move(finding));
  });
}

void detect_handoff_storm(const ProfileViews& views, std::vector<Finding>& findings) {
  for_each_lock(views, [&](const ProcessProfile& process, const LockSummary& lock, FindingLock at) {
    if (!is_handoff_storm(lock, process) || !material(lock.wait_sum_ns, views, at.process)) return;
    const double share = double(lock.owner_changes) / double(lock.acquisitions);
    const uint64_t known = lock.cross_cpu_handoffs + lock.same_cpu_handoffs;
    const std::string rest =
        fmt::format(": changes hands on {} of acquisitions, across CPUs", format_share(share));
    Finding finding;
    finding.rule = "handoff-storm";
    finding.title = title_name(lock, rest.size()) + rest;
    finding.locks.push_back(at);
    finding.sites = busiest_sites(lock);
    finding.evidence = {
        {"handoffs", double(lock.owner_changes),
         fmt::format("{} of {} acquisitions of {} took it from another thread",
                     format_count(lock.owner_changes), format_count(lock.acquisitions),
                     lock_name_phrase(lock))},
        {"cross_cpu_handoffs", double(lock.cross_cpu_handoffs),
         fmt::format("{} of the {} contended acquisitions whose CPU is known came from another CPU",
                     format_count(lock.cross_cpu_handoffs), format_count(known))},
        {"median_hold_ns", double(median_hold_ns(lock)),
         fmt::format("its median hold is {}", duration(median_hold_ns(lock)))},
        {"wait_ns", double(lock.wait_sum_ns),
         fmt::format("{} waiting for it to be handed over (each cross-CPU handoff also moves its "
                     "cache line: `lockscope bench c2c` gives the price)",
                     duration(lock.wait_sum_ns))},
    };
    finding.advice =
        "batch work per acquisition so that it changes hands less often, or try another lock "
        "(`lockscope bench c2c` gives a handoff's price)";
    finding.time_at_stake_ns = lock.wait_sum_ns;
    findings.push_back(std::move(finding));
  });
}

void detect_oversubscribed(const ProfileViews& views, std::vector<Finding>& findings) {
  for_each_lock(views, [&](const ProcessProfile& process, const LockSummary& lock, FindingLock at) {
    const std::optional<Oversubscription> over = oversubscription_of(lock, process);
    if (!over || !material(over->excess_ns, views, at.process)) return;
    const std::string rest =
        fmt::format(": holders preempted, {} of waits", duration(over->excess_ns));
    Finding finding;
    finding.rule = "oversubscribed";
    finding.title = title_name(lock, rest.size()) + rest;
    finding.locks.push_back(at);
    finding.sites = waiting_sites(lock);
    const size_t threads = process.threads.size();
    finding.evidence = {
        {"mean_wait_ns", double(over->mean_wait_ns),
         fmt::format("{} contended waits for {} average {}", format_count(lock.waits_only.total()),
                     lock_name_phrase(lock), duration(over->mean_wait_ns))},
        {"hold_behind_ns", double(over->hold_behind_ns),
         fmt::format("the holds they waited behind average {}", duration(over->hold_behind_ns))},
        {"long_waits", double(over->long_waits),
         fmt::format("{} waits longer than {} (ten times a full queue of the holds of {} other "
                     "thread{}, or 100 µs)",
                     format_count(over->long_waits), duration(over->threshold_ns), over->queue,
                     over->queue == 1 ? "" : "s")},
        {"preempted_holds", double(over->preempted_holds),
         fmt::format("{} of its holds lasted over {}, the longest {}",
                     format_count(over->preempted_holds), duration(over->preempted_hold_ns),
                     duration(lock.hold_max_ns))},
        {"excess_wait_ns", double(over->excess_ns),
         fmt::format("{} of its {} of waiting was in such waits", duration(over->excess_ns),
                     duration(lock.wait_sum_ns))},
        {"threads", double(threads),
         fmt::format("{} thread{} over the run; {}", threads, threads == 1 ? "" : "s",
                     cpus_text(process))},
        {"online_cpus", double(process.online_cpus),
         process.online_cpus == 0 ? "CPU count not known" : cpus_text(process)},
    };
    // Not known: say so, never guess. Known and no more threads than CPUs: the program's own
    // threads did not outnumber the CPUs, the machine's other load took them.
    if (process.online_cpus == 0)
      finding.advice = fmt::format(
          "{} threads ran and the CPU count is not known: run no more busy threads than CPUs",
          threads);
    else if (threads > process.online_cpus)
      finding.advice = fmt::format("{} threads ran on {} CPUs: run no more busy threads than CPUs",
                                   threads, process.online_cpus);
    else
      finding.advice =
          fmt::format("{} threads ran on {} CPUs: other load on the machine took their CPUs",
                      threads, process.online_cpus);
    finding.time_at_stake_ns = over->excess_ns;
    findings.push_back(std::move(finding));
  });
}

void detect_serial_bottleneck(const ProfileViews& views, std::vector<Finding>& findings) {
  for_each_lock(views, [&](const ProcessProfile& process, const LockSummary& lock, FindingLock at) {
    if (lock.wait_sum_ns == 0 || lock.contended < kSerialMinContended) return;
    const LockingThreads threads = locking_threads(process);
    if (threads.time_ns == 0) return;
    const double share = double(lock.wait_sum_ns) / double(threads.time_ns);
    if (share < kSerialShare || !material(lock.wait_sum_ns, views, at.process)) return;
    // A cause rule's finding on this lock is the better one and claims the same wait: diagnose()
    // then leaves this one out (rule_table.cpp). Judging the cause here instead, with less than
    // its rule's whole test, left a lock with neither finding when the cause rule did not fire.
    const std::string rest =
        fmt::format(": waiting for it takes {} of its threads' time", format_share(share));
    Finding finding;
    finding.rule = "serial-bottleneck";
    finding.title = title_name(lock, rest.size()) + rest;
    finding.locks.push_back(at);
    finding.sites = waiting_sites(lock);
    finding.evidence = {
        {"wait_ns", double(lock.wait_sum_ns),
         fmt::format("{} waiting for {} in {} contended acquisitions of {}",
                     duration(lock.wait_sum_ns), lock_name_phrase(lock),
                     format_count(lock.contended), format_count(lock.acquisitions))},
        {"threads", double(threads.count),
         fmt::format("{} thread{} took locks, {} of thread time{}", threads.count,
                     threads.count == 1 ? "" : "s", duration(threads.time_ns),
                     threads.lifetimes_known
                         ? ""
                         : " (each counted for the whole run: lifetimes not known)")},
        {"share", share,
         fmt::format(
             "at least {} of their time (the profile does not say which threads took this lock)",
             format_share(share))},
        {"conflict_rate", conflict_rate(lock),
         fmt::format("{} of its acquisitions contended", format_share(conflict_rate(lock)))},
        {"mean_hold_ns", double(lock.acquisitions == 0 ? 0 : lock.hold_sum_ns / lock.acquisitions),
         fmt::format("its holds average {}",
                     duration(lock.acquisitions == 0 ? 0 : lock.hold_sum_ns / lock.acquisitions))},
    };
    finding.advice = fmt::format(
        "{} threads take turns on it: shorten its critical sections, or split what it guards",
        threads.count);
    finding.time_at_stake_ns = lock.wait_sum_ns;
    findings.push_back(std::move(finding));
  });
}

}  // namespace lockscope
