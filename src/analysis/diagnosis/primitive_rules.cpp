// Rules about the choice of primitive: a spinlock that burns CPU spinning (spin-burn), an rwlock
// whose read side buys nothing because writes dominate it (rwlock-write-heavy).
#include <fmt/core.h>

#include <algorithm>

#include "analysis/diagnosis/event_rule_support.h"
#include "analysis/diagnosis/rule_table.h"
#include "analysis/duration_format.h"
#include "analysis/lock_names.h"
#include "analysis/profile_views.h"

namespace lockscope {
namespace {

using event_rules::add_site;
using event_rules::share_of;

// Spinning does no work and takes a CPU from threads that could; from a tenth of the spinning
// threads' CPU time it is a first-order cost, the band the verdict calls a bottleneck
// (kVerdictMajor, verdict_rule.cpp; SyncPerf flags a lock from a 5 % conflict rate, this counts
// the CPU the conflicts burn).
constexpr double kSpinBurnShare = 0.10;
// Below a millisecond in a whole run, spinning is within the noise of one run on a shared machine
// (a scheduler tick, 1-4 ms at CONFIG_HZ 1000-250, takes as much from any thread).
constexpr uint64_t kSpinBurnMinNs = 1'000'000;

// An rwlock pays for its read side (a reader count and its wake-ups: glibc's rwlock costs more
// per call than its mutex) only when readers hold it together. With a share w of writes, the
// runs of reads between two writes average (1 - w) / w reads (a geometric run), one or fewer from
// w = 1/2: readers then seldom share the lock, and it serialises like a mutex.
constexpr double kWriteHeavyShare = 0.5;
// SyncPerf (Alam et al., EuroSys 2017) looks at a lock from one acquisition per millisecond of the
// run: below it, a lock's cost cannot matter, whatever its kind.
constexpr double kWriteHeavyMinPerMs = 1.0;
// A share of fewer acquisitions is a handful of calls (±10 % at 100, by the binomial's spread).
constexpr uint64_t kWriteHeavyMinAcquisitions = 100;

// The time spinning is compared with, for a process's spinning threads: their CPU time when the
// profile holds it for every one of them, else their lifetimes (the process's run for a thread
// whose life it lacks), which the evidence then says.
struct SpinBase {
  uint64_t ns = 0;
  bool cpu = true;
  size_t threads = 0;
};

SpinBase spin_base(const ProcessProfile& process) {
  SpinBase base;
  const size_t spin = size_t(format::Primitive::kSpinLock);
  for (const ThreadSummary& thread : process.threads)
    if (thread.wait_ns_by_primitive[spin] > 0) {
      ++base.threads;
      base.cpu = base.cpu && thread.cpu_known;
    }
  for (const ThreadSummary& thread : process.threads) {
    if (thread.wait_ns_by_primitive[spin] == 0) continue;
    bool known = false;
    base.ns += base.cpu ? thread.cpu_ns : thread_lifetime_ns(process, thread, known);
  }
  return base;
}

void detect_spin_burn_in(const ProcessProfile& process, size_t p, std::vector<Finding>& findings) {
  const SpinBase base = spin_base(process);
  if (base.threads == 0 || base.ns == 0) return;
  for (size_t l = 0; l < process.locks.size(); ++l) {
    const LockSummary& lock = process.locks[l];
    if (lock.primitive != format::Primitive::kSpinLock) continue;
    // A spinlock's waits are its spinning: from the failed trylock-first to the acquisition.
    const uint64_t spun = lock.wait_sum_ns;
    const double share = share_of(spun, base.ns);
    if (spun < kSpinBurnMinNs || share < kSpinBurnShare) continue;
    Finding finding;
    finding.rule = "spin-burn";
    finding.severity = Severity::kWarning;
    finding.locks.push_back({p, l});
    finding.time_at_stake_ns = spun;
    const std::string base_name = base.cpu ? "CPU time" : "thread time";
    finding.title = fmt::format("{}: spinning is {} of its spinners' {}", lock_name_phrase(lock),
                                format_share(std::min(share, 1.0)), base_name);
    for (const SiteSummary* site : event_rules::heaviest_sites(
             lock, [](const SiteSummary& s) { return s.contended > 0; },
             [](const SiteSummary& s) { return s.wait_sum_ns; }, 3))
      add_site(finding.sites, site->location);
    // Where the holds they spun behind were taken, when the runtime saw it.
    const Blame* top_holder = nullptr;
    for (const SiteSummary& site : lock.sites)
      for (const Blame& blame : site.blame)
        if (blame.holder_site.known() && (!top_holder || blame.wait_ns > top_holder->wait_ns))
          top_holder = &blame;
    if (top_holder) add_site(finding.sites, top_holder->holder_site);
    finding.evidence.push_back(
        {"spin_ns", double(spun),
         fmt::format("{} spinning in {} of its {} acquisitions", format_duration_ns(double(spun)),
                     format_count(lock.contended), format_count(lock.acquisitions))});
    finding.evidence.push_back(
        {base.cpu ? "cpu_ns" : "thread_time_ns", double(base.ns),
         base.cpu ? fmt::format("{} of CPU time in the {} thread{} that spun",
                                format_duration_ns(double(base.ns)), base.threads,
                                base.threads == 1 ? "" : "s")
                  : fmt::format("{} of thread time in the {} thread{} that spun (their CPU time "
                                "is not in this profile)",
                                format_duration_ns(double(base.ns)), base.threads,
                                base.threads == 1 ? "" : "s")});
    // Spinning is wall time and CPU time is not: a spinner preempted while it spins adds to the
    // first only, and the share is then no more than all of it.
    finding.evidence.push_back({"share", std::min(share, 1.0), format_share(std::min(share, 1.0))});
    if (top_holder)
      finding.evidence.push_back({"holder_wait_ns", double(top_holder->wait_ns),
                                  fmt::format("{} of it behind holds taken at {}",
                                              format_duration_ns(double(top_holder->wait_ns)),
                                              event_rules::site_text(top_holder->holder_site))});
    finding.advice =
        "spin briefly, then park (a futex or an adaptive mutex), or use a mutex outright";
    findings.push_back(std::move(finding));
  }
}

void detect_write_heavy_in(const ProcessProfile& process, size_t p,
                           std::vector<Finding>& findings) {
  for (size_t l = 0; l < process.locks.size(); ++l) {
    const LockSummary& lock = process.locks[l];
    if (lock.primitive != format::Primitive::kRwLock) continue;
    const uint64_t writes = lock.write_side.acquisitions, reads = lock.read_side.acquisitions;
    const uint64_t all = writes + reads;
    if (all < kWriteHeavyMinAcquisitions) continue;
    // A profile without the run's length (a hand-made one) is judged by the share alone.
    const double per_ms = process.duration_ns == 0
                              ? kWriteHeavyMinPerMs
                              : double(all) * 1e6 / double(process.duration_ns);
    const double write_share = share_of(writes, all);
    if (per_ms < kWriteHeavyMinPerMs || write_share < kWriteHeavyShare) continue;
    uint64_t reads_behind_writer = 0;
    for (const SiteSummary& site : lock.sites)
      if (format::is_read_side(site.operation)) reads_behind_writer += site.behind_writer;
    Finding finding;
    finding.rule = "rwlock-write-heavy";
    finding.severity = Severity::kWarning;
    finding.locks.push_back({p, l});
    // Its waits, both sides: what the program spent on this lock. A mutex would wait too; how much
    // less is what `lockscope whatif` measures, not this profile.
    finding.time_at_stake_ns = lock.wait_sum_ns;
    finding.title = fmt::format("{}: {} of its {} acquisitions are writes", lock_name_phrase(lock),
                                format_share(write_share), format_count(all));
    for (const SiteSummary* site : event_rules::heaviest_sites(
             lock, [](const SiteSummary& s) { return format::is_write_side(s.operation); },
             [](const SiteSummary& s) { return s.acquisitions(); }, 2))
      add_site(finding.sites, site->location);
    for (const SiteSummary* site : event_rules::heaviest_sites(
             lock, [](const SiteSummary& s) { return format::is_read_side(s.operation); },
             [](const SiteSummary& s) { return s.acquisitions(); }, 1))
      add_site(finding.sites, site->location);
    finding.evidence.push_back(
        {"writes", double(writes), fmt::format("{} write locks", format_count(writes))});
    finding.evidence.push_back(
        {"reads", double(reads),
         fmt::format("{} read locks, {} of them waited behind a writer", format_count(reads),
                     format_count(reads_behind_writer))});
    finding.evidence.push_back({"write_share", write_share, format_share(write_share)});
    finding.evidence.push_back(
        {"wait_ns", double(lock.wait_sum_ns),
         fmt::format("{} waiting for it ({} writers, {} readers)",
                     format_duration_ns(double(lock.wait_sum_ns)),
                     format_duration_ns(double(lock.write_side.wait_sum_ns)),
                     format_duration_ns(double(lock.read_side.wait_sum_ns)))});
    finding.advice =
        "use a plain mutex: readers seldom share this lock, so its read side buys "
        "nothing";
    findings.push_back(std::move(finding));
  }
}

}  // namespace

void detect_spin_burn(const ProfileViews& views, std::vector<Finding>& findings) {
  const std::vector<ProcessProfile>& processes = views.profile().processes;
  for (size_t p = 0; p < processes.size(); ++p) detect_spin_burn_in(processes[p], p, findings);
}

void detect_rwlock_write_heavy(const ProfileViews& views, std::vector<Finding>& findings) {
  const std::vector<ProcessProfile>& processes = views.profile().processes;
  for (size_t p = 0; p < processes.size(); ++p) detect_write_heavy_in(processes[p], p, findings);
}

}  // namespace lockscope
