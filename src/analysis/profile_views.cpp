#include "analysis/profile_views.h"

#include "analysis/diagnosis/rule_table.h"

namespace lockscope {

uint64_t thread_lifetime_ns(const ProcessProfile& process, const ThreadSummary& thread,
                            bool& known) {
  known = thread.lifetime_known;
  if (!known) return process.duration_ns;
  const uint64_t end = thread.end_ns != 0 ? thread.end_ns : process.duration_ns;
  return end > thread.start_ns ? end - thread.start_ns : 0;
}

ProfileViews::ProfileViews(const Profile& profile) : profile_(&profile) {
  processes_.reserve(profile.processes.size());
  for (const ProcessProfile& process : profile.processes) {
    ProcessView view;
    view.process = &process;
    view.inversions = find_lock_order_inversions(process);
    for (const ThreadSummary& thread : process.threads) {
      view.lock_wait_ns +=
          thread.wait_sum_ns + thread.wait_ns_by_primitive[size_t(format::Primitive::kSpinLock)];
      bool known = false;
      view.thread_time_ns += thread_lifetime_ns(process, thread, known);
      view.thread_time_bounded |= !known;
    }
    if (process.trace.present) {
      view.trace_intervals = trace_intervals(process.trace);
      view.trace_names.emplace(process);
    }
    processes_.push_back(std::move(view));
  }
  findings_ = diagnose(*this);
}

const ProcessProfile* finding_process(const ProfileViews& views, const Finding& finding) {
  const std::vector<ProcessProfile>& processes = views.profile().processes;
  if (!finding.locks.empty() && finding.locks.front().process < processes.size())
    return &processes[finding.locks.front().process];
  return processes.size() == 1 ? &processes.front() : nullptr;
}

}  // namespace lockscope
