// The JSON report: every process, thread, lock and call site (not only the top N), under a
// versioned schema documented in docs/json-schema.md. The contract for scripts and CI.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "analysis/lock_order_cycles.h"
#include "analysis/wait_attribution.h"
#include "report/counter_descriptions.h"
#include "report/lock_rows.h"
#include "report/report_writer.h"

namespace lockscope {
namespace {

using nlohmann::json;

inline constexpr int kJsonSchemaVersion = 2;  // 2: every primitive (docs/json-schema.md); lock_order is additive

json histogram_json(const LatencyHistogram& histogram, uint64_t sum_ns, uint64_t max_ns) {
  json buckets = json::array();
  for (const LatencyHistogram::Bin& bin : histogram.bins()) {
    if (bin.bucket == LogHistogramLayout::kBuckets - 1)  // the overflow bucket has no upper bound
      buckets.push_back({{"gt_ns", LogHistogramLayout::lower_ns(bin.bucket)}, {"count", bin.count}});
    else
      buckets.push_back({{"le_ns", LogHistogramLayout::upper_ns(bin.bucket)}, {"count", bin.count}});
  }
  const auto report = report_buckets(histogram);
  return {{"sum_ns", sum_ns},
          {"max_ns", max_ns},
          {"p50_ns", std::min(histogram.percentile(0.50), double(max_ns))},
          {"p90_ns", std::min(histogram.percentile(0.90), double(max_ns))},
          {"p99_ns", std::min(histogram.percentile(0.99), double(max_ns))},
          {"le_1us", report[0]},
          {"le_10us", report[1]},
          {"le_100us", report[2]},
          {"le_1ms", report[3]},
          {"gt_1ms", report[4]},
          {"histogram", std::move(buckets)}};
}

json location_json(const CodeLocation& where, const ProcessProfile& process) {
  json out = {{"label", where.label}, {"offset", where.offset}};
  out["module"] = where.module < process.modules.size() ? json(process.modules[where.module].path)
                                                        : json(nullptr);
  if (!where.function.empty()) out["function"] = where.function;
  if (!where.file.empty()) out["file"] = where.file;
  if (where.line) out["line"] = where.line;
  if (!where.inlined_from.empty()) out["inlined_into"] = where.inlined_from;
  return out;
}

json site_json(const SiteSummary& site, const ProcessProfile& process) {
  json out = {{"operation", operation_name(site.operation)},
              {"caller", location_json(site.location, process)},
              {"count", site.count},
              {"failed", site.failed}};
  const format::OperationClass kind = format::operation_class(site.operation);
  out["class"] = kind == format::OperationClass::kAcquire   ? "acquire"
                 : kind == format::OperationClass::kRelease ? "release"
                 : kind == format::OperationClass::kWait    ? "wait"
                                                            : "event";
  if (kind == format::OperationClass::kAcquire || kind == format::OperationClass::kWait) {
    out["contended"] = site.contended;
    out["wait"] = histogram_json(site.wait, site.wait_sum_ns, site.wait_max_ns);
  }
  if (kind == format::OperationClass::kAcquire) {
    out["hold"] = histogram_json(site.hold, site.hold_sum_ns, site.hold_max_ns);
    out["hold"]["timed"] = site.hold_samples;
    out["hold"]["error_ns"] = site.hold_error_ns;
    json blame = json::array();
    const auto stack_id = [](size_t stack) {
      return stack == Blame::kNoStack ? json(nullptr) : json(stack);
    };
    for (const Blame& row : site.blame)
      blame.push_back({{"holder",
                        row.holder_site.known() ? location_json(row.holder_site, process) : json(nullptr)},
                       {"holder_stack", stack_id(row.holder_stack)},
                       {"holder_stack_from", row.holder_stack == Blame::kNoStack ? json(nullptr)
                                             : row.holder_stack_at_acquire       ? json("acquire")
                                                                                 : json("release")},
                       {"waiter_stack", stack_id(row.waiter_stack)},
                       {"waits", row.waits},
                       {"wait_ns", row.wait_ns}});
    out["waited_behind"] = std::move(blame);
    out["contended_from_cpu"] = {{"other", site.cross_cpu_handoffs}, {"same", site.same_cpu_handoffs}};
    json stacks = json::array();
    for (const SiteStack& row : site.stacks)
      stacks.push_back({{"stack", row.stack}, {"waits", row.waits}, {"wait_ns", row.wait_ns}});
    out["stacks"] = std::move(stacks);
    json hold_stacks = json::array();
    for (const HoldStack& row : site.hold_stacks)
      hold_stacks.push_back({{"stack", row.stack}, {"holds", row.holds}, {"hold_ns", row.hold_ns}});
    out["hold_stacks"] = std::move(hold_stacks);
    if (!site.acquire_stacks.empty()) {  // --stacks all
      json acquire_stacks = json::array();
      for (const SiteStack& row : site.acquire_stacks)
        acquire_stacks.push_back({{"stack", row.stack}, {"acquisitions", row.waits}});
      out["acquire_stacks"] = std::move(acquire_stacks);
    }
  }
  if (format::is_read_side(site.operation) || format::is_write_side(site.operation)) {
    out["behind_readers"] = site.behind_readers;
    out["behind_writer"] = site.behind_writer;
  }
  if (site.operation == format::Operation::kCondSignal ||
      site.operation == format::Operation::kCondBroadcast ||
      site.operation == format::Operation::kSemPost) {
    out["with_waiters"] = site.with_waiters;
    out["without_waiters"] = site.without_waiters;
  }
  if (site.operation == format::Operation::kBarrierWait) out["arrived_last"] = site.arrived_last;
  return out;
}

// A hold distribution with the 95 % bound of its total's sampling error (0 when exact).
json hold_json(const SideSummary& side) {
  json out = histogram_json(side.hold, side.hold_sum_ns, side.hold_max_ns);
  out["error_ns"] = side.hold_error_ns;
  return out;
}

json side_json(const SideSummary& side) {
  return {{"acquisitions", side.acquisitions},
          {"contended", side.contended},
          {"failed", side.failed},
          {"wait", histogram_json(side.wait, side.wait_sum_ns, side.wait_max_ns)},
          {"hold", hold_json(side)}};
}

// --caller-depth / --skip-frames: the lock's contended waits by attributed frame, and those that
// stay at their call site for want of a stack (together: `contended`).
void add_attributed_waits(json& out, const LockSummary& lock, const ProcessProfile& process,
                          const WaitAttributionRule& rule) {
  const WaitAttribution attribution = attribute_waits(process, lock.sites, rule);
  json rows = json::array();
  for (const AttributedWaits& row : attribution.frames)
    rows.push_back({{"frame", location_json(row.frame, process)},
                    {"waits", row.waits},
                    {"wait_ns", row.wait_ns}});
  out["attributed_waits"] = std::move(rows);
  out["waits_without_stack"] = {{"waits", attribution.without_stack_waits},
                                {"wait_ns", attribution.without_stack_wait_ns}};
}

json lock_json(const LockSummary& lock, const ProcessProfile& process,
               const ReportOptions& options) {
  json sites = json::array();
  for (const SiteSummary& site : lock.sites) sites.push_back(site_json(site, process));
  json out = {{"address", lock.address},
              {"generation", lock.generation},
              {"primitive", primitive_name(lock.primitive)},
              {"kind", lock_kind_name(lock)},
              {"capacity", lock.capacity},
              {"events", lock.events},
              {"reacquisitions", lock.reacquisitions},
              {"reacquire_wait_ns", lock.reacquire_wait_ns},
              {"wakeups", lock.wakeups},
              {"wake_latency_ns", lock.wake_latency_ns},
              {"destroyed", (lock.flags & format::kLockDestroyed) != 0},
              {"owner_died", (lock.flags & format::kLockOwnerDied) != 0},
              {"acquisitions", lock.acquisitions},
              {"releases", lock.releases},
              {"contended", lock.contended},
              {"failed", lock.failed},
              {"owner_changes", lock.owner_changes},
              {"contended_from_cpu",
               {{"other", lock.cross_cpu_handoffs}, {"same", lock.same_cpu_handoffs}}},
              {"wait", histogram_json(lock.wait, lock.wait_sum_ns, lock.wait_max_ns)},
              {"hold", hold_json(lock)},
              {"sites", std::move(sites)}};
  out["init_site"] = lock.init_site.known() ? location_json(lock.init_site, process) : json(nullptr);
  if (lock.primitive == format::Primitive::kRwLock) {
    out["read"] = side_json(lock.read_side);
    out["write"] = side_json(lock.write_side);
  }
  if (options.attribution) add_attributed_waits(out, lock, process, *options.attribution);
  return out;
}

// Every kind of wait of a thread, by primitive; never summed together.
json waits_by_primitive_json(const ThreadSummary& thread) {
  json out = json::object();
  for (uint32_t p = 1; p <= static_cast<uint32_t>(format::Primitive::kLast); ++p)
    out[primitive_name(static_cast<format::Primitive>(p))] = thread.wait_ns_by_primitive[p];
  return out;
}

// Edges name locks by their index in the process's "locks"; each inversion lists its edges (indices
// into "edges") in cycle order.
json lock_order_json(const ProcessProfile& process) {
  json edges = json::array();
  for (const LockOrderEdge& edge : process.lock_order)
    edges.push_back({{"held", edge.from_lock},
                     {"held_taken_at",
                      edge.from_site.known() ? location_json(edge.from_site, process) : json(nullptr)},
                     {"taken", edge.to_lock},
                     {"taken_at", location_json(edge.to_site, process)},
                     {"operation", operation_name(edge.to_operation)},
                     {"stack", edge.stack == LockOrderEdge::kNoStack ? json(nullptr)
                                                                     : json(edge.stack)},
                     {"tid", edge.tid}});
  json inversions = json::array();
  for (const LockOrderInversion& inversion : find_lock_order_inversions(process))
    inversions.push_back({{"edges", inversion.edges}});
  return {{"edges", std::move(edges)}, {"inversions", std::move(inversions)}};
}

// Call stacks (innermost frame first), named by index from the sites' "stacks".
json stacks_json(const ProcessProfile& process) {
  json out = json::array();
  for (const auto& stack : process.stacks) {
    json frames = json::array();
    for (const CodeLocation& frame : stack) frames.push_back(location_json(frame, process));
    out.push_back(std::move(frames));
  }
  return out;
}

// Trace mode: the files, then every event (by thread, each thread's in order); "site" indexes
// "sites". Absent (null) for a process recorded without --trace.
json trace_json(const ProcessProfile& process) {
  const ProcessTrace& trace = process.trace;
  if (!trace.present) return nullptr;
  json threads = json::array();
  for (const TraceThread& t : trace.threads)
    threads.push_back({{"tid", t.tid},
                       {"file", t.file},
                       {"events", t.events},
                       {"overwritten", t.overwritten},
                       {"dropped", t.dropped},
                       {"filtered", t.filtered},
                       {"closed", t.closed},
                       {"problem", t.problem.empty() ? json(nullptr) : json(t.problem)}});
  json sites = json::array();
  for (const CodeLocation& site : trace.sites) sites.push_back(location_json(site, process));
  json events = json::array();
  for (const TraceRecord& e : trace.events) {
    json event = {{"t_ns", e.time_ns}, {"tid", e.tid}, {"kind", trace_kind_name(e.kind)}};
    switch (e.kind) {
      case format::TraceKind::kCall:
      case format::TraceKind::kWaitBegin:
      case format::TraceKind::kHoldPause:
      case format::TraceKind::kHoldResume:
        event["operation"] = operation_name(e.operation);
        event["lock"] = e.object;
        event["site"] = e.site;
        break;
      case format::TraceKind::kThreadName: event["name"] = e.name; break;
      default: break;
    }
    if (e.kind == format::TraceKind::kCall) {
      event["generation"] = e.generation;
      event["waited"] = (e.flags & format::kTraceWaited) != 0;
      event["failed"] = (e.flags & format::kTraceFailed) != 0;
      if (e.flags & format::kTraceTimedOut) event["timed_out"] = true;
      if (e.flags & format::kTraceArrivedLast) event["arrived_last"] = true;
      if (e.flags & (format::kTraceWithWaiters | format::kTraceNoWaiters))
        event["waiters_seen"] = (e.flags & format::kTraceWithWaiters) != 0;
    }
    events.push_back(std::move(event));
  }
  return {{"ring", trace.ring},
          {"min_wait_ns", trace.min_wait_ns},
          {"cut_short", trace.cut_short},
          {"lost_events", trace.lost()},
          {"threads", std::move(threads)},
          {"sites", std::move(sites)},
          {"events", std::move(events)}};
}

json process_json(const ProcessProfile& process, const ReportOptions& options) {
  json threads = json::array();
  for (const ThreadSummary& t : process.threads)
    threads.push_back({{"tid", t.tid},
                       {"name", t.name},
                       {"main", (t.flags & format::kThreadMain) != 0},
                       {"exited", (t.flags & format::kThreadExited) != 0},
                       {"acquisitions", t.acquisitions},
                       {"releases", t.releases},
                       {"contended", t.contended},
                       {"failed", t.failed},
                       {"wait", histogram_json(t.wait, t.wait_sum_ns, t.wait_max_ns)},
                       {"waits_by_primitive_ns", waits_by_primitive_json(t)},
                       {"barrier_last_arrivals", t.barrier_last_arrivals}});
  json locks = json::array();
  for (const LockSummary& lock : process.locks) locks.push_back(lock_json(lock, process, options));
  json modules = json::array();
  for (const ModuleSummary& m : process.modules)
    modules.push_back({{"path", m.path}, {"build_id", m.build_id_hex}, {"load_bias", m.load_bias}});
  json counters = json::object();
  for (uint32_t id = 1; id <= kLastCounterId; ++id) {
    const auto counter = static_cast<format::Counter>(id);
    counters[describe_counter(counter).json_key] = process.counter(counter);
  }
  return {{"file", process.file},
          {"pid", process.pid},
          {"ppid", process.ppid},
          {"executable", process.executable},
          {"exec_target", process.exec_target},
          {"arguments", process.arguments},
          {"start_realtime_ns", process.start_realtime_ns},
          {"duration_ns", process.duration_ns},
          {"ended_by", exit_path_name(process.exit_path)},
          {"exit_status", process.exit_status},
          {"forked_from_profiled_parent", process.parent_was_profiled},
          {"clock", process.clock_source == format::ClockSource::kTsc ? "tsc" : "monotonic"},
          {"ticks_per_second", process.ticks_per_second},
          {"hold_sample_period", process.hold_sample_period},
          {"modules", std::move(modules)},
          {"threads", std::move(threads)},
          {"locks", std::move(locks)},
          {"lock_order", lock_order_json(process)},
          {"stacks", stacks_json(process)},
          {"trace", trace_json(process)},
          {"counters", std::move(counters)}};
}

class JsonReportWriter final : public ReportWriter {
 public:
  using ReportWriter::write;
  void write(const Profile& profile, const ReportOptions& options, ReportSink& sink) override {
    json processes = json::array();
    for (const ProcessProfile& process : profile.processes)
      processes.push_back(process_json(process, options));
    json problems = json::array();
    for (const ProfileProblem& problem : profile.problems)
      problems.push_back({{"file", problem.file}, {"problem", problem.message}});
    json document = {{"schema", "lockscope-report"},
                     {"schema_version", kJsonSchemaVersion},
                     {"directory", profile.directory},
                     {"processes", std::move(processes)},
                     {"problems", std::move(problems)}};
    if (options.attribution)
      document["wait_attribution"] = {{"caller_depth", options.attribution->caller_depth},
                                      {"skip_frames", options.attribution->skip_frames}};
    if (profile.repaired_strings) document["repaired_strings"] = profile.repaired_strings;
    // The CLI repairs every string before (repair_profile_strings); a string that still is not
    // UTF-8 (a caller that did not) gets U+FFFD rather than an exception and no report.
    sink.stream() << document.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_json_report_writer() {
  return std::make_unique<JsonReportWriter>();
}

}  // namespace lockscope
