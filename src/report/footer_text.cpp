#include "report/footer_text.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/debug_info_hint.h"
#include "analysis/duration_format.h"
#include "analysis/program_loadability.h"
#include "report/counter_descriptions.h"
#include "report/text_table.h"
#include "report/trace_text.h"

namespace lockscope {

void write_footer(const Profile& profile, std::ostream& out) {
  std::vector<std::string> notes;
  std::map<uint32_t, std::vector<uint32_t>> pids_by_sample_period;
  // Only where a hold was sampled: a process whose every site timed all its holds has no estimate.
  const auto sampled_a_hold = [](const ProcessProfile& process) {
    for (const LockSummary& lock : process.locks)
      for (const SiteSummary& site : lock.sites)
        if (site.hold_samples < site.acquisitions()) return true;
    return false;
  };
  for (const ProcessProfile& process : profile.processes)
    if (process.hold_sample_period > 1 && sampled_a_hold(process))
      pids_by_sample_period[process.hold_sample_period].push_back(process.pid);
  for (const auto& [period, pids] : pids_by_sample_period)
    notes.push_back(fmt::format(
        "{}: holds nobody waited for past a call site's first {} timed "
        "1 in {} and scaled (HOLD TOTAL is an estimate, capped at the "
        "run's length; --hold-sample 1 times every hold)",
        pids.size() == profile.processes.size() ? std::string("all processes")
                                                : fmt::format("pid {}", fmt::join(pids, ", ")),
        period, period));
  add_trace_notes(profile, notes);
  for (const ProcessProfile& process : profile.processes)
    if (process.exit_path == format::ExitPath::kSnapshot && !process.trace.cut_short)
      notes.push_back(
          fmt::format("pid {}: profile from its last snapshot ({} in): the process "
                      "ended without an exit path (SIGKILL?), later calls are missing",
                      process.pid, format_duration_ns(double(process.duration_ns))));
  // An exec whose new image left no profile of its own (same pid, started later).
  for (const ProcessProfile& process : profile.processes) {
    if (process.exit_path != format::ExitPath::kExec || process.exec_target.empty()) continue;
    const bool followed = std::any_of(
        profile.processes.begin(), profile.processes.end(), [&](const ProcessProfile& next) {
          return next.pid == process.pid && next.start_realtime_ns > process.start_realtime_ns;
        });
    if (followed) continue;
    // The reason the exec'ing process judged (format 4, which names the file it found); an older
    // file's target is judged now, as the report finds it.
    std::string reason = process.exec_unprofilable;
    if (process.exec_resolved.empty()) {
      const Unprofilable why = why_unprofilable(process.exec_target);
      if (!why.reason.empty())
        reason = why.program + " " + why.reason.substr(0, why.reason.find(':'));
    }
    const bool searched =
        !process.exec_resolved.empty() && process.exec_resolved != process.exec_target;
    notes.push_back(fmt::format(
        "pid {} exec'd {}{}: not profiled ({})", process.pid, process.exec_target,
        searched ? fmt::format(" ({})", process.exec_resolved) : std::string(),
        reason.empty() ? "its runtime was not loaded: a static or set-user-ID program, or "
                         "LD_PRELOAD removed from its environment; or it ran as a user that "
                         "cannot write the profile directory (su, sudo -u: its stderr says "
                         "\"cannot write profile\"; runuser or the program's own --user "
                         "option keep it)"
                       : reason));
  }
  for (const ProcessProfile& process : profile.processes)
    for (const LockSummary& lock : process.locks)
      if (lock.flags & format::kLockOwnerDied)
        notes.push_back(
            fmt::format("pid {}: {} {:#x} was acquired with EOWNERDEAD: a thread or "
                        "process died holding it",
                        process.pid, lock_kind_name(lock), lock.address));
  for (const ProcessProfile& process : profile.processes) {
    for (uint32_t id = 1; id <= kLastCounterId; ++id) {
      const auto counter = static_cast<format::Counter>(id);
      const char* note = describe_counter(counter).note;
      if (uint64_t value = process.counter(counter);
          note && value > 0 && !(counter == format::Counter::kThreadsLiveAtExit && value <= 1))
        notes.push_back(fmt::format("pid {}: {} {}", process.pid, format_count(value), note));
    }
  }
  for (const ProcessProfile& process : profile.processes)
    if (process.unknown_sections)
      notes.push_back(
          fmt::format("pid {}: {} section{} of a type this lockscope does not know "
                      "skipped in {} (written by a newer lockscope?)",
                      process.pid, process.unknown_sections,
                      process.unknown_sections == 1 ? "" : "s", process.file));
  // Call sites shown as module+offset: say which modules lack debug info and exactly how to get
  // it (debug_info_hint.h).
  // Each code address once: a server's thousands of locks share a few dozen call sites.
  // Each module once, whatever the processes, and each file once whatever its names: a module's
  // build-id names the file (git runs as /usr/bin/git and, hard-linked, /usr/lib/git-core/git).
  struct ModuleSites {
    std::set<uint64_t> without_lines, with_lines;
    std::vector<std::string> paths;  // the first one named, then any other
    std::string build_id;
  };
  std::map<std::string, ModuleSites> by_file;  // by build-id, else by path
  for (const ProcessProfile& process : profile.processes)
    for (const LockSummary& lock : process.locks)
      for (const SiteSummary& site : lock.sites)
        if (site.location.module < process.modules.size()) {
          const ModuleSummary& module = process.modules[site.location.module];
          ModuleSites& sites =
              by_file[module.build_id_hex.empty() ? "path " + module.path : module.build_id_hex];
          (site.location.line == 0 ? sites.without_lines : sites.with_lines)
              .insert(site.location.offset);
          if (std::find(sites.paths.begin(), sites.paths.end(), module.path) == sites.paths.end())
            sites.paths.push_back(module.path);
          sites.build_id = module.build_id_hex;
        }
  const char* debuginfod_urls = std::getenv("DEBUGINFOD_URLS");
  for (const auto& [file, sites] : by_file)
    if (!sites.without_lines.empty()) {
      const std::string& module = sites.paths.front();
      const std::string also =
          sites.paths.size() == 1
              ? std::string()
              : fmt::format(" (also as {})",
                            fmt::join(sites.paths.begin() + 1, sites.paths.end(), ", "));
      notes.push_back(fmt::format(
          "{} call site{} in {}{} without file:line: {}", sites.without_lines.size(),
          sites.without_lines.size() == 1 ? "" : "s", module, also,
          debug_info_hint({module, sites.build_id, debuginfod_urls ? debuginfod_urls : "",
                           sites.with_lines.size()})));
    }
  for (const ProfileProblem& problem : profile.problems)
    notes.push_back(fmt::format("not read: {}: {}", problem.file, problem.message));
  if (profile.repaired_strings)
    notes.push_back(
        fmt::format("{} string{} (arguments, thread names, paths or symbols) not valid "
                    "UTF-8 or with control characters: each such byte is shown as "
                    "\\xHH (a C1 control as \\u00HH)",
                    profile.repaired_strings, profile.repaired_strings == 1 ? "" : "s"));
  if (notes.empty()) {
    out << "nothing dropped: every lock operation of every profiled process was recorded\n";
    return;
  }
  out << "notes:\n";
  // Wrapped, never shortened: a note's paths and URLs are there to be used.
  for (const std::string& note : notes)
    write_wrapped_line(out, "  " + note, kReportWidth, 4, /*shorten=*/false);
}

}  // namespace lockscope
