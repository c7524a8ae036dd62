#include "report/trace_text.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "analysis/duration_format.h"

namespace lockscope {

void add_trace_notes(const Profile& profile, std::vector<std::string>& notes) {
  uint64_t events = 0, threads = 0, processes = 0;
  for (const ProcessProfile& process : profile.processes)
    if (process.trace.present) {
      events += process.trace.events.size();
      threads += process.trace.threads.size();
      ++processes;
    }
  if (processes == 0) return;
  notes.push_back(
      fmt::format("traced (--trace): {} events from {} thread{}{}", format_count(events), threads,
                  threads == 1 ? "" : "s",
                  processes == 1 ? std::string() : fmt::format(" of {} processes", processes)));
  for (const ProcessProfile& process : profile.processes) {
    const ProcessTrace& trace = process.trace;
    if (!trace.present) continue;
    uint64_t dropped = 0, dropped_no_key = 0, overwritten = 0, filtered = 0;
    for (const TraceThread& thread : trace.threads) {
      dropped += thread.dropped;
      dropped_no_key += thread.dropped_no_key;
      overwritten += thread.overwritten;
      filtered += thread.filtered;
    }
    std::vector<std::string> parts;
    if (trace.min_wait_ns)
      parts.push_back(
          fmt::format("only waits of at least {} kept (--min-wait), {} other events "
                      "left out, the counts above are still every call",
                      format_duration_ns(double(trace.min_wait_ns)), format_count(filtered)));
    if (dropped)
      parts.push_back(fmt::format(
          "{} events dropped: a thread's trace file was full{} (raise "
          "--trace-size, or --trace-full ring to keep the latest)",
          format_count(dropped),
          dropped_no_key == 0 ? std::string()
                              : fmt::format(", {} of them its table of distinct lock, "
                                            "site and operation keys (a 256th of the file)",
                                            format_count(dropped_no_key))));
    if (overwritten)
      parts.push_back(
          fmt::format("{} oldest events overwritten by the ring", format_count(overwritten)));
    if (!parts.empty())
      notes.push_back(fmt::format("pid {}: trace: {}", process.pid, fmt::join(parts, "; ")));
    if (trace.rebuilt)
      notes.push_back(fmt::format(
          "pid {}: cut short: it ended without an exit path (SIGKILL?); its figures come from its "
          "trace, to its last event (call stacks, blame and cross-CPU counts: its last snapshot "
          "only)",
          process.pid));
    else if (trace.cut_short)
      notes.push_back(fmt::format(
          "pid {}: cut short: it ended without an exit path (SIGKILL?); its trace did not keep "
          "every event, so its figures are those of its last snapshot ({} in); the trace's events "
          "go on to the end",
          process.pid, format_duration_ns(double(process.duration_ns))));
    for (const TraceThread& thread : trace.threads)
      if (!thread.problem.empty())
        notes.push_back(fmt::format("pid {}: trace of thread {} ({}): {}", process.pid, thread.tid,
                                    thread.file, thread.problem));
  }
}

}  // namespace lockscope
