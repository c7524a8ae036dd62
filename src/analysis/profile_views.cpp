#include "analysis/profile_views.h"

#include <fmt/core.h>

#include <set>

#include "analysis/lock_kinds.h"
#include "analysis/lock_names.h"
#include "analysis/process_shared_ties.h"

namespace lockscope {

uint64_t thread_lifetime_ns(const ProcessProfile& process, const ThreadSummary& thread,
                            bool& known) {
  known = thread.lifetime_known;
  if (!known) return process.duration_ns;
  const uint64_t end = thread.end_ns != 0 ? thread.end_ns : process.duration_ns;
  return end > thread.start_ns ? end - thread.start_ns : 0;
}

namespace {

void add_process_figures(const Profile& profile, const ProcessProfile& process, ProcessView& view) {
  for (const LockSummary& lock : process.locks) view.used_locks += lock_was_used(lock);
  for (const ThreadSummary& thread : process.threads) {
    view.acquired += thread.acquisitions;
    view.contended += thread.contended;
    view.blocked_wait_ns += thread.wait_sum_ns;
  }
  const bool ended_well = process.exit_path == format::ExitPath::kExec ||
                          ((process.exit_path == format::ExitPath::kExit ||
                            process.exit_path == format::ExitPath::kUnderscoreExit) &&
                           process.exit_status == 0);
  view.took_no_lock = view.used_locks == 0 && view.acquired == 0 && ended_well &&
                      &process != &profile.processes.front();
}

// Four hex digits tell most same-name locks apart (a loop's locks are usually 64 bytes or more
// apart); more are taken only where four do not.
constexpr int kMinTagDigits = 4;

void add_name_tags(const ProcessProfile& process, ProcessView& view) {
  std::map<std::string, std::vector<size_t>> by_name;
  for (size_t l = 0; l < process.locks.size(); ++l)
    if (process.locks[l].same_name_locks > 1) by_name[lock_name(process.locks[l])].push_back(l);
  for (const auto& [name, locks] : by_name) {
    std::set<uint64_t> addresses;  // generations of one address share a tag: "#N" tells them apart
    for (size_t l : locks) addresses.insert(process.locks[l].address);
    int digits = kMinTagDigits;
    for (; digits < 16; ++digits) {
      const uint64_t mask = (uint64_t{1} << (4 * digits)) - 1;
      std::set<uint64_t> tails;
      for (uint64_t address : addresses) tails.insert(address & mask);
      if (tails.size() == addresses.size()) break;
    }
    for (size_t l : locks) {
      const uint64_t address = process.locks[l].address;
      const uint64_t tail = digits < 16 ? address & ((uint64_t{1} << (4 * digits)) - 1) : address;
      view.name_tags.emplace(l, fmt::format("@…{:0{}x}", tail, digits));
    }
  }
}

}  // namespace

// The figures of every process; the constructor (diagnosis/rule_table.cpp, beside the rules it
// runs) adds the findings over them.
void ProfileViews::add_process_views(const Profile& profile) {
  std::vector<std::map<size_t, std::vector<uint32_t>>> ties = find_process_shared_ties(profile);
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
    add_process_figures(profile, process, view);
    view.shared_with = std::move(ties[processes_.size()]);
    add_name_tags(process, view);
    processes_.push_back(std::move(view));
  }
}

const ProcessProfile* finding_process(const ProfileViews& views, const Finding& finding) {
  const std::vector<ProcessProfile>& processes = views.profile().processes;
  if (!finding.locks.empty() && finding.locks.front().process < processes.size())
    return &processes[finding.locks.front().process];
  return processes.size() == 1 ? &processes.front() : nullptr;
}

}  // namespace lockscope
