// The verdict: whether locks matter to this program at all, as the share of its threads' time
// spent waiting for locks. Always one finding, first in every report.
#include <fmt/core.h>

#include <algorithm>

#include "analysis/diagnosis/rule_table.h"
#include "analysis/duration_format.h"
#include "analysis/lock_kinds.h"
#include "analysis/lock_names.h"
#include "analysis/profile_views.h"

namespace lockscope {
namespace {

// Below 1 % of thread time, removing every lock wait would not change the run measurably (within
// the noise of one run on a shared machine, ±several %); at 10 % and above they are a first-order
// cost. SyncPerf (Alam et al., 2017) counts a lock as worth a look from a 5 % conflict rate; the
// verdict's bands sit on either side of that.
constexpr double kVerdictMinor = 0.01;
constexpr double kVerdictMajor = 0.10;

}  // namespace

void detect_verdict(const ProfileViews& views, std::vector<Finding>& findings) {
  uint64_t wait_ns = 0, thread_ns = 0;
  bool bounded = false;
  size_t threads = 0;
  const LockSummary* top = nullptr;
  FindingLock top_at;
  const std::vector<ProcessProfile>& processes = views.profile().processes;
  for (size_t p = 0; p < processes.size(); ++p) {
    const ProcessView& view = views.processes()[p];
    wait_ns += view.lock_wait_ns;
    thread_ns += view.thread_time_ns;
    bounded |= view.thread_time_bounded;
    threads += processes[p].threads.size();
    for (size_t l = 0; l < processes[p].locks.size(); ++l) {
      const LockSummary& lock = processes[p].locks[l];
      const bool is_lock = is_lock_primitive(lock.primitive);
      if (is_lock && lock.wait_sum_ns > 0 &&
          (top == nullptr || lock.wait_sum_ns > top->wait_sum_ns)) {
        top = &lock;
        top_at = {p, l};
      }
    }
  }
  const double share = thread_ns == 0 ? 0 : double(wait_ns) / double(thread_ns);
  // A thread whose life the profile lacks counts the whole run: the share is then a lower bound.
  const std::string share_text = (bounded && wait_ns > 0 ? "at least " : "") + format_share(share);
  Finding finding;
  finding.rule = "verdict";
  finding.time_at_stake_ns = wait_ns;
  if (wait_ns == 0) {
    finding.severity = Severity::kNote;
    finding.title = "no thread waited for a lock: locks are not this program's bottleneck";
  } else if (share < kVerdictMinor) {
    finding.severity = Severity::kNote;
    finding.title = fmt::format(
        "lock waits are {} of thread time: locks are not this program's "
        "bottleneck",
        share_text);
  } else if (share < kVerdictMajor) {
    finding.severity = Severity::kWarning;
    finding.title =
        fmt::format("lock waits are {} of thread time: a cost, not the bottleneck", share_text);
  } else {
    finding.severity = Severity::kWarning;
    finding.title =
        fmt::format("lock waits are {} of thread time: locks are a bottleneck", share_text);
  }
  finding.evidence.push_back(
      {"lock_wait_ns", double(wait_ns),
       fmt::format("{} waiting for locks", format_duration_ns(double(wait_ns)))});
  finding.evidence.push_back(
      {"thread_time_ns", double(thread_ns),
       fmt::format("{} of thread time ({} thread{}{})", format_duration_ns(double(thread_ns)),
                   format_count(threads), threads == 1 ? "" : "s",
                   // A thread is seen from its first interposed call: work before it is not in
                   // its time, so say where its time is counted from.
                   bounded ? "; threads whose life is not known count the whole run"
                           : ", each from its first lock call")});
  finding.evidence.push_back({"share", share, share_text});
  if (top != nullptr) {
    finding.locks.push_back(top_at);
    finding.evidence.push_back(
        {"top_lock_wait_ns", double(top->wait_sum_ns),
         fmt::format("{} of it on {}{}", format_duration_ns(double(top->wait_sum_ns)),
                     lock_name_phrase(*top),
                     top->same_name_locks > 1 ? fmt::format(" (one of {} locks of that name)",
                                                            format_count(top->same_name_locks))
                                              : "")});
  }
  findings.push_back(std::move(finding));
}

}  // namespace lockscope
