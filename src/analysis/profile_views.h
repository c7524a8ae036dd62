// Views: every figure derived from a profile, computed once, for every writer and for the
// diagnosis. Writers read views and print; none computes (DESIGN.md, "writers render, analysis
// concludes"). Built once per report, after symbolization (lock names, sites) and before any
// writer runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/diagnosis/finding.h"
#include "analysis/lock_order_cycles.h"
#include "analysis/profile_model.h"
#include "analysis/trace_intervals.h"

namespace lockscope {

// The figures of one process that no single record holds.
struct ProcessView {
  const ProcessProfile* process = nullptr;
  // Lock-order inversions (potential deadlocks), searched once.
  std::vector<LockOrderInversion> inversions;
  // Its threads' lock waits added up: mutexes, rwlocks, condvar re-acquires (ThreadSummary's
  // wait_sum_ns) and spinning (wait_ns_by_primitive[spinlock]).
  uint64_t lock_wait_ns = 0;
  // Its threads' lifetimes added up: what lock_wait_ns is a share of. A thread whose lifetime the
  // profile does not hold counts the process's whole run (thread_time_bounded: the share is then
  // a lower bound).
  uint64_t thread_time_ns = 0;
  bool thread_time_bounded = false;
  // record --trace: its waits, holds and handoffs as intervals, and the names its timelines give
  // threads and locks (trace_intervals.h), for every timeline format (html, chrome, sqlite's
  // events); empty, and no names, without a trace.
  TraceIntervals trace_intervals;
  std::optional<TraceNames> trace_names;

  // The processes table's figures. Locks used (lock_kinds.h's lock_was_used); its threads'
  // acquisitions and contended ones (every lock kind a thread holds after: spinlocks too), and
  // their waits blocked on mutexes, rwlocks and condvar re-acquires (ThreadSummary's wait_sum_ns:
  // lock_wait_ns less spinning, which is CPU burned and has a column of its own), added up so that
  // the processes and threads tables agree.
  size_t used_locks = 0;
  uint64_t acquired = 0;
  uint64_t contended = 0;
  uint64_t blocked_wait_ns = 0;
  // It took no lock and ended well (exit status 0, or an exec), and is not the profile's first
  // process: one of a build's hundreds of compilers and shells, which a report folds into one line
  // by name. A process that failed may explain the run, and stays listed.
  bool took_no_lock = false;
  // Its process-shared locks that other processes of its family used too (process_shared_ties.h):
  // lock index -> their pids.
  std::map<size_t, std::vector<uint32_t>> shared_with;
  // Its locks that share their name with others of the process (same_name_locks > 1): lock index
  // -> the last hex digits of the address, as few as tell them apart ("@…cf90"), so that 4,096
  // mutexes made by one loop are told apart in a table without their full addresses.
  std::map<size_t, std::string> name_tags;
};

class ProfileViews {
 public:
  // `profile` must outlive the views. Defined in diagnosis/rule_table.cpp.
  explicit ProfileViews(const Profile& profile);
  ProfileViews(const ProfileViews&) = delete;
  ProfileViews& operator=(const ProfileViews&) = delete;

  const Profile& profile() const { return *profile_; }
  // One per process, in the profile's order.
  const std::vector<ProcessView>& processes() const { return processes_; }
  // Every rule's findings, ranked (diagnosis/rule_table.h): the verdict first.
  const std::vector<Finding>& findings() const { return findings_; }

  const LockSummary& lock(const FindingLock& which) const {
    return profile_->processes[which.process].locks[which.lock];
  }

 private:
  // The views lie below the rules (diagnosis/), which read them: the constructor that runs the
  // rules is defined with them (rule_table.cpp), and this part of it, the figures, here.
  void add_process_views(const Profile& profile);

  const Profile* profile_;
  std::vector<ProcessView> processes_;
  std::vector<Finding> findings_;
};

// A thread's lifetime as the profile knows it: its end (or the process's) less its start; the
// process's whole run when the profile does not hold it (`known` false).
uint64_t thread_lifetime_ns(const ProcessProfile& process, const ThreadSummary& thread,
                            bool& known);

// The process whose modules a finding's sites are in: its first lock's, else the profile's only
// process; nullptr when neither (a finding about no lock of a profile of several processes).
const ProcessProfile* finding_process(const ProfileViews& views, const Finding& finding);

}  // namespace lockscope
