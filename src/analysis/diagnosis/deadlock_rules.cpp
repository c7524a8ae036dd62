// Rules about threads that can stop each other for good: locks taken in conflicting orders
// (lock-order-inversion: a deadlock that can happen), threads still blocked at exit in such a
// cycle (deadlock: one that happened), and a real-time thread that waited behind lower-priority
// holders on a mutex without priority inheritance (priority-inversion).
//
// What the profile does not hold, and these rules therefore do not claim:
//   - which thread held which lock at exit, or which thread a blocked wait was: the runtime
//     writes a wait in progress into its site (a call that has not returned: `failed`, its time
//     so far in the site's waits; Counter::kWaitsInProgress), and a hold in progress into its
//     acquire site's hold time, but no record ties them to a thread. A deadlock is therefore
//     recognised as a lock-order cycle each of whose nested acquisitions (the call site that
//     took the next lock while holding the previous one) was still blocked when the profile was
//     written;
//   - which thread a given wait was made by, or which thread held the lock it waited behind (blame
//     names the holder's site only): a priority inversion is therefore claimed only where every
//     holder a real-time thread could have waited behind had a lower priority than it.
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
using event_rules::site_text;

constexpr const char* kOneOrderAdvice =
    "take these locks in one order everywhere, or together (std::scoped_lock)";

// Linux's policy numbers (<linux/sched.h>): the report reads profiles of any machine.
constexpr int32_t kSchedFifo = 1;
constexpr int32_t kSchedRr = 2;
constexpr int32_t kSchedDeadline = 6;

// Acquisitions that block until they succeed: one of these that has not returned when the profile
// is written is a wait in progress (its `failed`; errors are immediate and rare: EDEADLK, EAGAIN).
bool blocks_until_acquired(format::Operation op) {
  return op == format::Operation::kLock || op == format::Operation::kReadLock ||
         op == format::Operation::kWriteLock;
}

// The site of an edge's nested acquisition: `to_lock` taken at `to_site`.
const SiteSummary* nested_site(const ProcessProfile& process, const LockOrderEdge& edge) {
  for (const SiteSummary& site : process.locks[edge.to_lock].sites)
    if (site.operation == edge.to_operation && same_place(site.location, edge.to_site))
      return &site;
  return nullptr;
}

// A nested acquisition still blocked when the profile was written.
const SiteSummary* blocked_nested_site(const ProcessProfile& process, const LockOrderEdge& edge) {
  const SiteSummary* site = nested_site(process, edge);
  if (site == nullptr || !blocks_until_acquired(site->operation)) return nullptr;
  return site->failed > 0 && site->wait_max_ns > 0 ? site : nullptr;
}

// Whether a lock-order cycle is a deadlock that happened: as many waits in progress at the write
// as the cycle has locks, and each edge's nested acquisition among them.
bool deadlocked(const ProcessProfile& process, const LockOrderInversion& inversion) {
  if (process.counter(format::Counter::kWaitsInProgress) < inversion.edges.size()) return false;
  for (size_t e : inversion.edges)
    if (blocked_nested_site(process, process.lock_order[e]) == nullptr) return false;
  return true;
}

// "account_a and account_b", "a, b and c".
std::string cycle_names(const ProcessProfile& process, const LockOrderInversion& inversion) {
  std::string names;
  for (size_t i = 0; i < inversion.edges.size(); ++i) {
    if (i > 0) names += i + 1 == inversion.edges.size() ? " and " : ", ";
    names += lock_name(process.locks[process.lock_order[inversion.edges[i]].from_lock]);
  }
  return names;
}

// One edge as a person reads it, with the stack its nested acquisition was made from.
std::string edge_text(const ProcessProfile& process, const LockOrderEdge& edge) {
  std::string text =
      fmt::format("thread {} held {} (taken at {}) and then took {} at {}", edge.tid,
                  lock_name(process.locks[edge.from_lock]), site_text(edge.from_site),
                  lock_name(process.locks[edge.to_lock]), site_text(edge.to_site));
  if (edge.stack != LockOrderEdge::kNoStack && edge.stack < process.stacks.size()) {
    const std::vector<CodeLocation>& frames = process.stacks[edge.stack];
    for (size_t i = 1; i < frames.size() && i <= 4; ++i)
      text += fmt::format(", from {}", site_text(frames[i]));
  }
  return text;
}

void add_cycle(const ProcessProfile& process, size_t p, const LockOrderInversion& inversion,
               Finding& finding) {
  for (size_t e : inversion.edges) {
    const LockOrderEdge& edge = process.lock_order[e];
    finding.locks.push_back({p, edge.from_lock});
    add_site(finding.sites, edge.to_site);
    add_site(finding.sites, edge.from_site);
  }
  for (size_t e : inversion.edges)
    finding.evidence.push_back(
        {"edge", double(process.lock_order[e].tid), edge_text(process, process.lock_order[e])});
}

void detect_inversions_in(const ProcessView& view, size_t p, std::vector<Finding>& findings) {
  const ProcessProfile& process = *view.process;
  for (const LockOrderInversion& inversion : view.inversions) {
    if (deadlocked(process, inversion)) continue;  // the deadlock rule's finding says more
    Finding finding;
    finding.rule = "lock-order-inversion";
    finding.severity = Severity::kError;
    finding.title =
        fmt::format("lock-order inversion: {} taken in {}", cycle_names(process, inversion),
                    inversion.edges.size() == 2 ? "both orders" : "a cycle of orders");
    add_cycle(process, p, inversion, finding);
    // The waits at the acquisitions that close the cycle: each was made holding the cycle's
    // previous lock, a window in which the deadlock could have closed. Measured there.
    uint64_t nested_wait = 0, nested_waits = 0;
    for (size_t e : inversion.edges)
      if (const SiteSummary* site = nested_site(process, process.lock_order[e])) {
        nested_wait += site->wait_sum_ns;
        nested_waits += site->contended;
      }
    finding.time_at_stake_ns = nested_wait;
    finding.evidence.push_back(
        {"nested_wait_ns", double(nested_wait),
         fmt::format("{} waited in {} contended nested acquisitions, holding the other lock",
                     format_duration_ns(double(nested_wait)), format_count(nested_waits))});
    finding.advice = kOneOrderAdvice;
    findings.push_back(std::move(finding));
  }
}

void detect_deadlocks_in(const ProcessView& view, size_t p, std::vector<Finding>& findings) {
  const ProcessProfile& process = *view.process;
  for (const LockOrderInversion& inversion : view.inversions) {
    if (!deadlocked(process, inversion)) continue;
    Finding finding;
    finding.rule = "deadlock";
    finding.severity = Severity::kError;
    finding.title = inversion.edges.size() == 2
                        ? fmt::format("deadlock: threads hold {}, each blocked on the other",
                                      cycle_names(process, inversion))
                        : fmt::format("deadlock: {} threads blocked at exit in a cycle through {}",
                                      inversion.edges.size(), cycle_names(process, inversion));
    add_cycle(process, p, inversion, finding);
    // The blocked waits' time up to the profile's write. A site with no completed wait holds
    // the blocked ones' time alone; one with earlier waits adds theirs (the profile keeps no
    // separate total of a wait in progress).
    uint64_t blocked_ns = 0, earlier_waits = 0;
    for (size_t e : inversion.edges) {
      const SiteSummary* site = blocked_nested_site(process, process.lock_order[e]);
      blocked_ns += site->wait_sum_ns;
      earlier_waits += site->contended;
    }
    finding.time_at_stake_ns = blocked_ns;
    finding.evidence.push_back(
        {"blocked_ns", double(blocked_ns),
         earlier_waits == 0
             ? fmt::format("{} blocked, up to the profile's write",
                           format_duration_ns(double(blocked_ns)))
             : fmt::format("{} waited at these acquisitions, {} earlier waits included",
                           format_duration_ns(double(blocked_ns)), format_count(earlier_waits))});
    finding.evidence.push_back(
        {"waits_in_progress", double(process.counter(format::Counter::kWaitsInProgress)),
         fmt::format("{} waits still in progress at exit, each of the cycle's nested acquisitions "
                     "among them (which thread held which lock is not recorded)",
                     format_count(process.counter(format::Counter::kWaitsInProgress)))});
    finding.advice = kOneOrderAdvice;
    findings.push_back(std::move(finding));
  }
}

// A thread's rank among the threads it could wait behind: SCHED_DEADLINE above every fixed
// priority, SCHED_FIFO and SCHED_RR by priority (1-99), the others (0) below them.
int rank_of(const ThreadSummary& thread) {
  if (thread.sched_policy == kSchedDeadline) return 1000;
  if (thread.sched_policy == kSchedFifo || thread.sched_policy == kSchedRr)
    return thread.sched_priority;
  return 0;
}

std::string thread_text(const ThreadSummary& thread) {
  return thread.name.empty() ? fmt::format("thread {}", thread.tid)
                             : fmt::format("thread {} ({})", thread.tid, thread.name);
}

void detect_priority_inversions_in(const ProcessProfile& process, size_t p,
                                   std::vector<Finding>& findings) {
  // Every thread's priority must be known: any one may have been a holder.
  for (const ThreadSummary& thread : process.threads)
    if (!thread.sched_known) return;
  // The mutexes waited for. A thread's waits are not recorded by lock: the claim holds only when
  // every mutex waited for lacks priority inheritance, and none is shared with other processes
  // (whose threads the profile does not rank).
  std::vector<size_t> waited;
  for (size_t l = 0; l < process.locks.size(); ++l) {
    const LockSummary& lock = process.locks[l];
    if (lock.primitive != format::Primitive::kMutex || lock.wait_sum_ns == 0) continue;
    if (lock.flags &
        (format::kLockPriorityInherit | format::kLockPriorityProtect | format::kLockProcessShared))
      return;
    waited.push_back(l);
  }
  if (waited.empty()) return;
  std::stable_sort(waited.begin(), waited.end(), [&](size_t a, size_t b) {
    return process.locks[a].wait_sum_ns > process.locks[b].wait_sum_ns;
  });
  const size_t mutex = size_t(format::Primitive::kMutex);
  for (const ThreadSummary& thread : process.threads) {
    const bool real_time = thread.sched_policy == kSchedFifo || thread.sched_policy == kSchedRr;
    if (!real_time || thread.wait_ns_by_primitive[mutex] == 0) continue;
    // Every other thread ranks below it: whoever it waited behind had a lower priority.
    bool highest = true;
    for (const ThreadSummary& other : process.threads)
      if (&other != &thread && rank_of(other) >= rank_of(thread)) highest = false;
    if (!highest) continue;
    const char* policy = thread.sched_policy == kSchedFifo ? "SCHED_FIFO" : "SCHED_RR";
    const LockSummary& top = process.locks[waited.front()];
    Finding finding;
    finding.rule = "priority-inversion";
    finding.severity = Severity::kError;
    for (size_t l : waited) finding.locks.push_back({p, l});
    finding.time_at_stake_ns = thread.wait_ns_by_primitive[mutex];
    const std::string which = waited.size() == 1
                                  ? lock_name(top)
                                  : fmt::format("{} (+{} more)", lock_name(top), waited.size() - 1);
    finding.title = fmt::format("{}: a {} {} thread waited {} behind lower priority", which, policy,
                                thread.sched_priority,
                                format_duration_ns(double(thread.wait_ns_by_primitive[mutex])));
    for (size_t l : waited) {
      for (const SiteSummary* site : event_rules::heaviest_sites(
               process.locks[l], [](const SiteSummary& s) { return s.contended > 0; },
               [](const SiteSummary& s) { return s.wait_sum_ns; }, 2))
        add_site(finding.sites, site->location);
      for (const SiteSummary& site : process.locks[l].sites)
        for (const Blame& blame : site.blame) add_site(finding.sites, blame.holder_site);
    }
    finding.evidence.push_back(
        {"wait_ns", double(thread.wait_ns_by_primitive[mutex]),
         fmt::format("{}, {} priority {}, waited {} for mutexes", thread_text(thread), policy,
                     thread.sched_priority,
                     format_duration_ns(double(thread.wait_ns_by_primitive[mutex])))});
    int next_rank = 0;
    for (const ThreadSummary& other : process.threads)
      if (&other != &thread) next_rank = std::max(next_rank, rank_of(other));
    finding.evidence.push_back(
        {"next_priority", double(next_rank),
         fmt::format("every other of the process's {} threads ranks lower (the highest: {})",
                     process.threads.size(),
                     next_rank == 0 ? std::string("not real-time")
                                    : fmt::format("priority {}", next_rank))});
    finding.evidence.push_back(
        {"mutexes", double(waited.size()),
         fmt::format("{} mutex{} waited for, none with priority inheritance: {}{}", waited.size(),
                     waited.size() == 1 ? "" : "es", lock_name_phrase(top),
                     waited.size() == 1 ? "" : " and others")});
    finding.advice = "make the mutex PTHREAD_PRIO_INHERIT (pthread_mutexattr_setprotocol)";
    findings.push_back(std::move(finding));
  }
}

}  // namespace

void detect_lock_order_inversion(const ProfileViews& views, std::vector<Finding>& findings) {
  for (size_t p = 0; p < views.processes().size(); ++p)
    detect_inversions_in(views.processes()[p], p, findings);
}

void detect_deadlock(const ProfileViews& views, std::vector<Finding>& findings) {
  for (size_t p = 0; p < views.processes().size(); ++p)
    detect_deadlocks_in(views.processes()[p], p, findings);
}

void detect_priority_inversion(const ProfileViews& views, std::vector<Finding>& findings) {
  const std::vector<ProcessProfile>& processes = views.profile().processes;
  for (size_t p = 0; p < processes.size(); ++p)
    detect_priority_inversions_in(processes[p], p, findings);
}

}  // namespace lockscope
