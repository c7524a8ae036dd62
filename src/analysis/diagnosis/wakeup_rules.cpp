// Rules about condition-variable wake-ups: signals and broadcasts that find nobody waiting
// (lost-signals), and broadcasts that wake a crowd which then queues for the mutex
// (thundering-herd).
#include <fmt/core.h>

#include "analysis/diagnosis/event_rule_support.h"
#include "analysis/diagnosis/rule_table.h"
#include "analysis/duration_format.h"
#include "analysis/lock_names.h"
#include "analysis/profile_views.h"

namespace lockscope {
namespace {

using event_rules::add_site;
using event_rules::same_place;
using event_rules::share_of;

// "Most of them", the wording: more than half of a condvar's signals and broadcasts.
constexpr double kLostSignalShare = 0.5;
// A share of fewer calls is a handful (±10 % at 100, by the binomial's spread), and a few lost
// signals are what every start-up and shut-down sends.
constexpr uint64_t kLostSignalsMin = 100;

// A broadcast that wakes n waiters for one piece of work sends n - 1 of them back to wait: the
// majority ("most wait again", the wording) from n = 3 (2 of 3).
constexpr double kHerdMinWokenPerBroadcast = 3.0;
// Fewer broadcasts that found waiters are a start-up or a shut-down (every worker woken once to
// begin or to exit), which is what a broadcast is for.
constexpr uint64_t kHerdMinBroadcasts = 10;
// Woken together, the crowd takes the mutex in turn: of n woken at once n - 1 wait for it (2/3
// and more from n = 3). Half leaves room for wake-ups that found the mutex free.
constexpr double kHerdContendedShare = 0.5;

bool is_send(format::Operation op) {
  return op == format::Operation::kCondSignal || op == format::Operation::kCondBroadcast;
}

bool is_condition_wait(format::Operation op) {
  return op == format::Operation::kCondWait || op == format::Operation::kCondTimedWait ||
         op == format::Operation::kCondClockWait;
}

void detect_lost_signals_in(const ProcessProfile& process, size_t p,
                            std::vector<Finding>& findings) {
  for (size_t l = 0; l < process.locks.size(); ++l) {
    const LockSummary& condvar = process.locks[l];
    if (condvar.primitive != format::Primitive::kCondVar) continue;
    uint64_t sent = 0, lost = 0, found = 0;
    for (const SiteSummary& site : condvar.sites)
      if (is_send(site.operation)) {
        sent += site.count;
        lost += site.without_waiters;
        found += site.with_waiters;
      }
    const double share = share_of(lost, sent);
    if (lost < kLostSignalsMin || share <= kLostSignalShare) continue;
    uint64_t waits = 0, timed_out = 0;
    for (const SiteSummary& site : condvar.sites)
      if (is_condition_wait(site.operation)) {
        waits += site.count;
        timed_out += site.failed;
      }
    Finding finding;
    finding.rule = "lost-signals";
    // A note, not a warning: glibc's signal to no waiter is a few atomic reads and no system
    // call, so what it costs is small and not measured (CPython's GIL signals on every release,
    // and nothing there is the program's to change).
    finding.severity = Severity::kNote;
    finding.locks.push_back({p, l});
    // The runtime counts signals and broadcasts but does not time them: what they cost is not in
    // the profile (glibc's signal to no waiter is a few atomic reads, no system call).
    finding.time_at_stake_ns = 0;
    finding.title = fmt::format("{}: {} of {} signals found no waiter", lock_name_phrase(condvar),
                                format_count(lost), format_count(sent));
    for (const SiteSummary* site : event_rules::heaviest_sites(
             condvar, [](const SiteSummary& s) { return s.without_waiters > 0; },
             [](const SiteSummary& s) { return s.without_waiters; }, 3))
      add_site(finding.sites, site->location);
    finding.evidence.push_back(
        {"without_waiters", double(lost),
         fmt::format("{} signals and broadcasts found no thread waiting", format_count(lost))});
    finding.evidence.push_back(
        {"with_waiters", double(found), fmt::format("{} found one", format_count(found))});
    finding.evidence.push_back({"share", share, format_share(share)});
    finding.evidence.push_back({"waits", double(waits),
                                fmt::format("{} condition waits on it, {} timed out",
                                            format_count(waits), format_count(timed_out))});
    finding.evidence.push_back(
        {"time_at_stake_ns", 0, "not measured: the runtime does not time signal calls"});
    finding.advice =
        "signal only when the state a waiter waits for changes (and a waiter may be "
        "there)";
    findings.push_back(std::move(finding));
  }
}

// The mutex re-acquisitions made by the waits on a condvar: the cond-reacquire sites, on any
// mutex, at the call sites of its condition waits. (A wait wrapper used for several condvars
// shares one site: their re-acquisitions are then counted together.)
struct Reacquires {
  uint64_t count = 0, contended = 0, wait_ns = 0;
  std::vector<size_t> mutexes;  // by their wait there, most first
};

Reacquires reacquires_of(const ProcessProfile& process, const LockSummary& condvar) {
  Reacquires found;
  std::vector<std::pair<uint64_t, size_t>> by_wait;
  for (size_t m = 0; m < process.locks.size(); ++m) {
    const LockSummary& mutex = process.locks[m];
    if (mutex.primitive != format::Primitive::kMutex || mutex.reacquisitions == 0) continue;
    uint64_t mutex_wait = 0;
    bool used = false;
    for (const SiteSummary& site : mutex.sites) {
      if (site.operation != format::Operation::kCondReacquire) continue;
      bool at_wait = false;
      for (const SiteSummary& wait : condvar.sites)
        at_wait = at_wait ||
                  (is_condition_wait(wait.operation) && same_place(wait.location, site.location));
      if (!at_wait) continue;
      used = true;
      found.count += site.count;
      found.contended += site.contended;
      found.wait_ns += site.wait_sum_ns;
      mutex_wait += site.wait_sum_ns;
    }
    if (used) by_wait.push_back({mutex_wait, m});
  }
  std::stable_sort(by_wait.begin(), by_wait.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [wait, m] : by_wait) found.mutexes.push_back(m);
  return found;
}

void detect_herd_in(const ProcessProfile& process, size_t p, std::vector<Finding>& findings) {
  for (size_t l = 0; l < process.locks.size(); ++l) {
    const LockSummary& condvar = process.locks[l];
    if (condvar.primitive != format::Primitive::kCondVar) continue;
    uint64_t broadcasts = 0, signals = 0;  // those that found a waiter
    for (const SiteSummary& site : condvar.sites) {
      if (site.operation == format::Operation::kCondBroadcast) broadcasts += site.with_waiters;
      if (site.operation == format::Operation::kCondSignal) signals += site.with_waiters;
    }
    if (broadcasts < kHerdMinBroadcasts) continue;
    // Wake-ups are waits ended by a signal or broadcast; a signal wakes one at most.
    const uint64_t woken = condvar.wakeups > signals ? condvar.wakeups - signals : 0;
    const double per_broadcast = double(woken) / double(broadcasts);
    if (per_broadcast < kHerdMinWokenPerBroadcast) continue;
    const Reacquires reacquires = reacquires_of(process, condvar);
    const double contended = share_of(reacquires.contended, reacquires.count);
    if (reacquires.count == 0 || contended < kHerdContendedShare) continue;
    Finding finding;
    finding.rule = "thundering-herd";
    finding.severity = Severity::kWarning;
    finding.locks.push_back({p, l});
    for (size_t m : reacquires.mutexes) finding.locks.push_back({p, m});
    // The woken crowd's queueing for the mutex: measured at the re-acquires.
    finding.time_at_stake_ns = reacquires.wait_ns;
    const std::string mutex_name = reacquires.mutexes.empty()
                                       ? std::string("the mutex")
                                       : lock_name(process.locks[reacquires.mutexes.front()]);
    finding.title = fmt::format("{}: {:.1f} waiters woken per broadcast queued for {}",
                                lock_name_phrase(condvar), per_broadcast, mutex_name);
    for (const SiteSummary* site : event_rules::heaviest_sites(
             condvar,
             [](const SiteSummary& s) { return s.operation == format::Operation::kCondBroadcast; },
             [](const SiteSummary& s) { return s.with_waiters; }, 2))
      add_site(finding.sites, site->location);
    for (const SiteSummary* site : event_rules::heaviest_sites(
             condvar, [](const SiteSummary& s) { return is_condition_wait(s.operation); },
             [](const SiteSummary& s) { return s.count; }, 2))
      add_site(finding.sites, site->location);
    finding.evidence.push_back(
        {"broadcasts", double(broadcasts),
         fmt::format("{} broadcasts found waiters", format_count(broadcasts))});
    finding.evidence.push_back(
        {"woken_per_broadcast", per_broadcast,
         fmt::format("{} waits woken by them ({:.1f} each)", format_count(woken), per_broadcast)});
    finding.evidence.push_back(
        {"reacquire_contended", double(reacquires.contended),
         fmt::format("{} of {} re-acquisitions of {} after the wake-up waited",
                     format_count(reacquires.contended), format_count(reacquires.count),
                     mutex_name)});
    finding.evidence.push_back(
        {"reacquire_wait_ns", double(reacquires.wait_ns),
         fmt::format("{} queueing for it", format_duration_ns(double(reacquires.wait_ns)))});
    finding.advice = "signal one waiter per piece of work, or use one condvar per condition";
    findings.push_back(std::move(finding));
  }
}

}  // namespace

void detect_lost_signals(const ProfileViews& views, std::vector<Finding>& findings) {
  const std::vector<ProcessProfile>& processes = views.profile().processes;
  for (size_t p = 0; p < processes.size(); ++p) detect_lost_signals_in(processes[p], p, findings);
}

void detect_thundering_herd(const ProfileViews& views, std::vector<Finding>& findings) {
  const std::vector<ProcessProfile>& processes = views.profile().processes;
  for (size_t p = 0; p < processes.size(); ++p) detect_herd_in(processes[p], p, findings);
}

}  // namespace lockscope
