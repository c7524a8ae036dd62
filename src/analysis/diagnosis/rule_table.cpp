#include "analysis/diagnosis/rule_table.h"

#include <algorithm>

#include "analysis/profile_views.h"

namespace lockscope {

const char* severity_name(Severity severity) {
  switch (severity) {
    case Severity::kNote:
      return "note";
    case Severity::kWarning:
      return "warning";
    case Severity::kError:
      return "error";
  }
  return "note";
}

const std::vector<Rule>& rule_table() {
  static const std::vector<Rule> rules = {
      {"verdict", "how much locks cost",
       "always one finding: the share of thread time lost to lock waits, and whether locks matter "
       "to this program at all",
       "below 1 % of thread time: not a bottleneck; 1-10 %: a cost; 10 % and more: a bottleneck "
       "(kVerdictMinor, kVerdictMajor: verdict_rule.cpp)",
       "none: the findings below it say what to change", "lock wait and thread time, per process",
       detect_verdict},
      // The contention family (contention_rules.cpp, placement_rules.cpp).
      {"serial-bottleneck", "a lock the threads take turns on",
       "a lock whose waits are a large share of the time of its threads, when no more specific "
       "cause (long-hold, handoff-storm, oversubscribed) explains them",
       "its waits >= 10 % of the time of the threads that took locks (the verdict's bottleneck "
       "band) and >= 1 % of the process's thread time (kSerialShare, kMaterialShare)",
       "shorten its critical sections, or split what it guards",
       "its wait, its threads and their time, the share, its conflict rate and mean hold",
       detect_serial_bottleneck},
      {"long-hold", "one site's long holds",
       "one acquire site's holds cause most of a lock's waits (the blame records), with holds far "
       "longer than the lock's typical hold",
       "> 50 % of the lock's wait behind that site's holds; its mean hold >= 10x the median hold "
       "of the lock's other sites; that wait >= 1 % of thread time (kLongHoldBlameShare, "
       "kLongHoldFactor)",
       "move work out of the critical section at that site (its mean and max hold)",
       "the wait behind the site, its waits, its mean and max hold, the lock's median hold",
       detect_long_hold},
      {"hot-lock", "the locking itself costs",
       "very frequent acquisitions with little contention: the lock and unlock calls themselves "
       "cost (acquisitions x this machine's uncontended pair, measured at report time)",
       "conflict rate < 5 % and >= 1 acquisition/ms (SyncPerf's quadrants); acquisitions x pair "
       ">= 1 % of thread time (kConflictRate, kFrequentPerMs, kMaterialShare)",
       "batch work per acquisition, per-thread state, or atomics",
       "acquisitions and rate, conflict rate, the measured pair price, the time in lock calls",
       detect_hot_lock},
      {"handoff-storm", "the lock's cache line ping-pongs",
       "handoffs nearly as many as acquisitions, mostly from another CPU, with short holds: the "
       "lock's cache line moves between CPUs on each acquisition",
       "handoffs >= 50 % of acquisitions; >= 50 % of those whose CPU is known cross-CPU; median "
       "hold <= 1 us; >= 1 acquisition/ms; its wait >= 1 % of thread time (kHandoffShare, "
       "kCrossCpuShare, kShortHoldNs)",
       "batch work per acquisition; try another lock (`lockscope bench c2c` gives the price)",
       "handoffs, cross- and same-CPU ones, median hold, the wait for it", detect_handoff_storm},
      {"asymmetric-contention", "a few locks of one name take the waits",
       "locks of one name (same init or first-use site: a striped or hashed set) of which a few "
       "take most of the waiting: striping or hashing imbalance",
       "an instance is hot with >= 4x the mean wait of the others; the hot ones > 50 % of the "
       "name's wait and >= 1 % of thread time (kHotInstanceFactor, kHotWaitShare)",
       "the hot instances and their share: hash or stripe by another key",
       "the locks of the name, each hot one's share of waits and acquisitions, conflict rates",
       detect_asymmetric_contention},
      {"oversubscribed", "holders preempted",
       "waits far longer than the holds behind them: holders (or woken waiters) waited for a "
       "CPU, more runnable threads than CPUs",
       "> 50 % of the lock's wait in >= 10 waits longer than 10x a full queue of the holds behind "
       "them and than 100 us; >= 1 hold over 100 us and 10x the mean; that time >= 1 % of thread "
       "time (kWaitOverHold, kPreemptedWaitNs, kUnexplainedShare, kMinLongWaits, "
       "kMinPreemptedHolds)",
       "thread count against CPUs (or that the CPU count is not known)",
       "mean wait, mean hold behind it, the long waits and their time, threads and CPUs",
       detect_oversubscribed},
      {"false-sharing", "two busy locks in one cache line",
       "two often-used locks, taken by different threads, in one 64-byte line",
       ">= 111 acquisitions/ms each (1 % of a ms at the lab's 90 ns line transfer); no thread took "
       "as many locks as the two together (kSharedLinePerMs)",
       "align or pad each to its own 64-byte line, naming both",
       "both locks' addresses and rates, the line, the time in their lock calls",
       detect_false_sharing},
      // The event rules: the choice of primitive, wake-ups, deadlocks and priorities.
      {"spin-burn", "spinning burns CPU",
       "a spinlock whose spinning is a large share of the CPU time of the threads that spun",
       "spinning on the lock at least 10 % of the spinning threads' CPU time (their thread time "
       "while the profile lacks it), and at least 1 ms (kSpinBurnShare, kSpinBurnMinNs: "
       "primitive_rules.cpp)",
       "spin briefly, then park (a futex or an adaptive mutex), or use a mutex outright",
       "the time spun, the spinning threads' CPU (or thread) time, the share, the holder's site",
       detect_spin_burn},
      {"lost-signals", "signals that wake nobody",
       "a condvar most of whose signals and broadcasts found no thread waiting",
       "more than 50 % of its signals and broadcasts, and at least 100 of them (kLostSignalShare, "
       "kLostSignalsMin: wakeup_rules.cpp)",
       "signal only when the state a waiter waits for changes", "signals with and without a waiter",
       detect_lost_signals},
      {"thundering-herd", "broadcasts that wake a crowd",
       "a condvar whose broadcasts wake many waiters at once, which then queue for the mutex",
       "at least 10 broadcasts that found waiters, 3 or more waits woken per broadcast, at least "
       "50 % of the mutex re-acquisitions at its wait sites contended (kHerdMinBroadcasts, "
       "kHerdMinWokenPerBroadcast, kHerdContendedShare: wakeup_rules.cpp)",
       "signal one waiter per piece of work, or use one condvar per condition",
       "broadcasts, waits woken per broadcast, the mutex re-acquisitions that waited and their "
       "time",
       detect_thundering_herd},
      {"rwlock-write-heavy", "an rwlock that is mostly written",
       "an rwlock whose writes dominate, so that readers seldom share it and its read side buys "
       "nothing",
       "writes at least 50 % of at least 100 acquisitions, at 1 acquisition/ms or more "
       "(kWriteHeavyShare, kWriteHeavyMinAcquisitions, kWriteHeavyMinPerMs: primitive_rules.cpp)",
       "use a plain mutex", "writes, reads, the write share, its waits by side",
       detect_rwlock_write_heavy},
      {"priority-inversion", "a real-time thread behind lower priority",
       "a SCHED_FIFO/SCHED_RR thread waited for mutexes without priority inheritance, behind "
       "holders that all had a lower priority",
       "any such wait: every thread's policy known, the waiting thread above every other, every "
       "mutex waited for in the process neither PTHREAD_PRIO_INHERIT/PROTECT nor process-shared "
       "(deadlock_rules.cpp)",
       "make the mutex PTHREAD_PRIO_INHERIT",
       "the thread, its policy and its mutex waits; the mutexes", detect_priority_inversion},
      {"lock-order-inversion", "locks taken in conflicting orders",
       "a cycle of locks taken while holding one another in conflicting orders: a deadlock that "
       "can happen (one that happened is the deadlock rule's)",
       "any cycle whose acquisitions can wait for one another (lock_order_cycles.h)",
       "take the locks in one order everywhere",
       "each edge: the thread, both locks, both sites, the stack; the waits at the nested "
       "acquisitions",
       detect_lock_order_inversion},
      {"deadlock", "a deadlock that happened",
       "threads still blocked at exit in a cycle of holds: a lock-order cycle each of whose nested "
       "acquisitions was still blocked when the profile was written",
       "any such cycle (deadlock_rules.cpp)", "take the locks in one order everywhere",
       "the cycle's edges, the blocked time, the waits in progress", detect_deadlock},
  };
  return rules;
}

const Rule* find_rule(std::string_view id) {
  for (const Rule& rule : rule_table())
    if (rule.id == id) return &rule;
  return nullptr;
}

namespace {

// The rules whose time at stake is a lock's own wait (its cause): a serial-bottleneck finding on
// such a lock would count that wait twice. The others name a lock for another reason (hot-lock's
// lock calls, an inversion's nested waits, a priority inversion's mutexes, false sharing's line)
// and leave its wait to serial-bottleneck.
bool claims_the_wait(const std::string& rule) {
  for (const char* cause : {"long-hold", "handoff-storm", "oversubscribed", "asymmetric-contention",
                            "spin-burn", "rwlock-write-heavy", "thundering-herd", "deadlock"})
    if (rule == cause) return true;
  return false;
}

}  // namespace

std::vector<Finding> diagnose(const ProfileViews& views) {
  std::vector<Finding> findings;
  std::vector<size_t> rule_of;  // each finding's row, for the ranking's ties
  const std::vector<Rule>& rules = rule_table();
  for (size_t row = 0; row < rules.size(); ++row) {
    rules[row].detect(views, findings);
    rule_of.resize(findings.size(), row);
  }
  // A serial bottleneck is a symptom: where a cause rule names the same lock, that finding says
  // why its threads queue (a long hold, a broadcast's herd, a spinner, a deadlock) and claims the
  // lock's wait, which would otherwise be counted at stake twice.
  std::vector<bool> dropped(findings.size(), false);
  for (size_t i = 0; i < findings.size(); ++i) {
    if (findings[i].rule != "serial-bottleneck" || findings[i].locks.empty()) continue;
    for (size_t j = 0; j < findings.size() && !dropped[i]; ++j) {
      if (j == i || !claims_the_wait(findings[j].rule)) continue;
      for (const FindingLock& lock : findings[j].locks)
        if (lock == findings[i].locks.front()) dropped[i] = true;
    }
  }
  std::vector<size_t> order;
  for (size_t i = 0; i < findings.size(); ++i)
    if (!dropped[i]) order.push_back(i);
  auto first_lock = [&](size_t i) {
    return findings[i].locks.empty() ? FindingLock{SIZE_MAX, SIZE_MAX} : findings[i].locks.front();
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const bool verdict_a = findings[a].rule == "verdict", verdict_b = findings[b].rule == "verdict";
    if (verdict_a != verdict_b) return verdict_a;
    // Defects (a deadlock, one that can happen, a priority inversion) before costs: a potential
    // deadlock that never waited has nothing at stake yet, and must still reach the first screen.
    const bool error_a = findings[a].severity == Severity::kError;
    const bool error_b = findings[b].severity == Severity::kError;
    if (error_a != error_b) return error_a;
    if (findings[a].time_at_stake_ns != findings[b].time_at_stake_ns)
      return findings[a].time_at_stake_ns > findings[b].time_at_stake_ns;
    if (rule_of[a] != rule_of[b]) return rule_of[a] < rule_of[b];
    const FindingLock la = first_lock(a), lb = first_lock(b);
    return la.process != lb.process ? la.process < lb.process : la.lock < lb.lock;
  });
  std::vector<Finding> ranked;
  ranked.reserve(order.size());
  for (size_t i : order) ranked.push_back(std::move(findings[i]));
  return ranked;
}

// The views' constructor, here beside diagnose(): the views are figures the rules read, and the
// rules run once over them when they are made.
ProfileViews::ProfileViews(const Profile& profile) : profile_(&profile) {
  add_process_views(profile);
  findings_ = diagnose(*this);
}

}  // namespace lockscope
