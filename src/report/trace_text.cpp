#include "report/trace_text.h"

#include <fmt/core.h>

#include "report/duration_format.h"

namespace lockscope {

void add_trace_notes(const Profile& profile, std::vector<std::string>& notes) {
  for (const ProcessProfile& process : profile.processes) {
    const ProcessTrace& trace = process.trace;
    if (!trace.present) continue;
    uint64_t dropped = 0, overwritten = 0, filtered = 0;
    for (const TraceThread& thread : trace.threads) {
      dropped += thread.dropped;
      overwritten += thread.overwritten;
      filtered += thread.filtered;
    }
    std::string note = fmt::format("pid {}: traced, {} events from {} thread{}", process.pid,
                                   format_count(trace.events.size()), trace.threads.size(),
                                   trace.threads.size() == 1 ? "" : "s");
    if (trace.min_wait_ns)
      note += fmt::format("; only waits of at least {} kept (--min-wait), {} other events left "
                          "out, the counts above are still every call",
                          format_duration_ns(double(trace.min_wait_ns)), format_count(filtered));
    if (dropped)
      note += fmt::format("; {} events dropped: a thread's trace file was full (raise "
                          "--trace-size, or --trace-full ring to keep the latest)",
                          format_count(dropped));
    if (overwritten)
      note += fmt::format("; {} oldest events overwritten by the ring", format_count(overwritten));
    notes.push_back(note);
    if (trace.cut_short)
      notes.push_back(fmt::format(
          "pid {}: cut short: it ended without an exit path (SIGKILL?); its figures come from its "
          "trace, to its last event{} (call stacks, blame and cross-CPU counts: its last snapshot "
          "only)",
          process.pid,
          trace.min_wait_ns || dropped || overwritten
              ? ", less the events the trace did not keep (counts are lower bounds)"
              : ""));
    for (const TraceThread& thread : trace.threads)
      if (!thread.problem.empty())
        notes.push_back(fmt::format("pid {}: trace of thread {} ({}): {}", process.pid, thread.tid,
                                    thread.file, thread.problem));
  }
}

}  // namespace lockscope
