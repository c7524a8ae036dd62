// The JSON report's trace section (record --trace): the trace files, their sites and every
// event, each naming its lock by name (its address when the tables lack it).
#include <fmt/core.h>

#include "analysis/lock_names.h"
#include "analysis/trace_intervals.h"
#include "report/json_report_parts.h"

namespace lockscope {
namespace {

void trace_event_value(JsonWriter& w, const TraceRecord& e, const TraceNames& names) {
  w.begin_object()
      .field("t_ns", e.time_ns)
      .field("tid", e.tid)
      .field("kind", trace_kind_name(e.kind));
  switch (e.kind) {
    case format::TraceKind::kCall:
    case format::TraceKind::kWaitBegin:
    case format::TraceKind::kHoldPause:
    case format::TraceKind::kHoldResume:
      w.field("operation", operation_name(e.operation)).field("lock", e.object).key("lock_name");
      if (const LockSummary* lock = names.lock_of(e))
        w.value(lock_name(*lock));
      else  // a lock the tables lack (a ring's overwritten start): its address
        w.value(fmt::format("{:#x}", e.object));
      w.field("site", e.site);
      break;
    case format::TraceKind::kThreadName:
      w.field("name", e.name);
      break;
    default:
      break;
  }
  if (e.kind == format::TraceKind::kCall) {
    w.field("generation", e.generation)
        .field("waited", (e.flags & format::kTraceWaited) != 0)
        .field("failed", (e.flags & format::kTraceFailed) != 0);
    if (e.flags & format::kTraceTimedOut) w.field("timed_out", true);
    if (e.flags & format::kTraceArrivedLast) w.field("arrived_last", true);
    if (format::trace_interrupted(e.flags))
      w.field("interrupted", true);
    else if (e.flags & (format::kTraceWithWaiters | format::kTraceNoWaiters))
      w.field("waiters_seen", (e.flags & format::kTraceWithWaiters) != 0);
  }
  w.end_object();
}

}  // namespace

// Trace mode: the files, then every event (by thread, each thread's in order); "site" indexes
// "sites". Null for a process recorded without --trace.
void json_trace_field(JsonWriter& w, const ProcessView& view) {
  const ProcessProfile& process = *view.process;
  const ProcessTrace& trace = process.trace;
  w.key("trace");
  if (!trace.present) {
    w.value(nullptr);
    return;
  }
  w.begin_object()
      .field("ring", trace.ring)
      .field("min_wait_ns", trace.min_wait_ns)
      .field("cut_short", trace.cut_short)
      .field("lost_events", trace.lost())
      .array("threads");
  for (const TraceThread& t : trace.threads) {
    w.begin_object()
        .field("tid", t.tid)
        .field("file", t.file)
        .field("events", t.events)
        .field("overwritten", t.overwritten)
        .field("dropped", t.dropped)
        .field("dropped_no_key", t.dropped_no_key)
        .field("filtered", t.filtered)
        .field("closed", t.closed)
        .key("problem");
    if (t.problem.empty())
      w.value(nullptr);
    else
      w.value(t.problem);
    w.end_object();
  }
  w.end_array().array("sites");
  for (const CodeLocation& site : trace.sites) json_location_value(w, site, process);
  w.end_array().array("events");
  for (const TraceRecord& e : trace.events) trace_event_value(w, e, *view.trace_names);
  w.end_array().end_object();
}

}  // namespace lockscope
