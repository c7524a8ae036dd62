// The JSON report: every process, thread, lock and call site (not only the top N), under a
// versioned schema documented in docs/json-schema.md. The contract for scripts and CI. Written as
// it goes (json_writer.h): a server's profile is tens of megabytes of JSON, never a tree in memory.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "analysis/lock_names.h"
#include "analysis/lock_order_cycles.h"
#include "analysis/wait_attribution.h"
#include "report/counter_descriptions.h"
#include "report/evidence_json.h"
#include "report/json_report_parts.h"
#include "report/json_writer.h"
#include "report/lock_rows.h"
#include "report/report_writer.h"

namespace lockscope {

void json_location_value(JsonWriter& w, const CodeLocation& where, const ProcessProfile& process) {
  w.begin_object().field("label", where.label).field("offset", where.offset).key("module");
  if (where.module < process.modules.size())
    w.value(process.modules[where.module].path);
  else
    w.value(nullptr);
  if (!where.function.empty()) w.field("function", where.function);
  if (!where.file.empty()) w.field("file", where.file);
  if (where.line) w.field("line", where.line);
  if (!where.inlined_from.empty()) w.key("inlined_into").values(where.inlined_from);
  w.end_object();
}

namespace {

// 2: every primitive (docs/json-schema.md); lock_order is additive. 3: a lock's, a side's and a
// thread's wait percentiles are of the waits only. 4: a wait blocked at exit counts failed. 5:
// locks have names, the report has findings (the diagnosis), and a lock's own sites no longer
// stand for it: every place that names a lock carries its name.
inline constexpr int kJsonSchemaVersion = 5;

// The members of a latency distribution, into the object the caller opened (which may add more).
// `ranked`: what the percentiles are of, when not the whole histogram: a lock's or a thread's
// waits only, without the uncontended acquisitions its buckets count at 0 (as the text and CSV
// reports' WAIT P99; over all acquisitions, a p99 of 1.5 us stood beside their 86 us).
void histogram_members(JsonWriter& w, const LatencyHistogram& histogram, uint64_t sum_ns,
                       uint64_t max_ns, const LatencyHistogram* ranked = nullptr) {
  const auto report = report_buckets(histogram);
  const LatencyHistogram& of = ranked ? *ranked : histogram;
  w.field("sum_ns", sum_ns)
      .field("max_ns", max_ns)
      .field("p50_ns", std::min(of.percentile(0.50), double(max_ns)))
      .field("p90_ns", std::min(of.percentile(0.90), double(max_ns)))
      .field("p99_ns", std::min(of.percentile(0.99), double(max_ns)))
      .field("le_1us", report[0])
      .field("le_10us", report[1])
      .field("le_100us", report[2])
      .field("le_1ms", report[3])
      .field("gt_1ms", report[4]);
  w.array("histogram");
  for (const LatencyHistogram::Bin& bin : histogram.bins()) {
    w.begin_object();
    if (bin.bucket == LogHistogramLayout::kBuckets - 1)  // the overflow bucket has no upper bound
      w.field("gt_ns", LogHistogramLayout::lower_ns(bin.bucket));
    else
      w.field("le_ns", LogHistogramLayout::upper_ns(bin.bucket));
    w.field("count", bin.count).end_object();
  }
  w.end_array();
}

void histogram_field(JsonWriter& w, std::string_view name, const LatencyHistogram& histogram,
                     uint64_t sum_ns, uint64_t max_ns, const LatencyHistogram* ranked = nullptr) {
  w.object(name);
  histogram_members(w, histogram, sum_ns, max_ns, ranked);
  w.end_object();
}

// A location, or null for one not known.
void known_location_field(JsonWriter& w, std::string_view name, const CodeLocation& where,
                          const ProcessProfile& process) {
  w.key(name);
  if (where.known())
    json_location_value(w, where, process);
  else
    w.value(nullptr);
}

void stack_id_field(JsonWriter& w, std::string_view name, size_t stack, size_t none) {
  w.key(name);
  if (stack == none)
    w.value(nullptr);
  else
    w.value(stack);
}

// A cross-CPU / same-CPU split of the handoffs of contended acquisitions.
void handoffs_field(JsonWriter& w, uint64_t other, uint64_t same) {
  w.object("contended_from_cpu").field("other", other).field("same", same).end_object();
}

// The members of an acquisition site that only acquisitions have: holds, blame, stacks.
void acquire_site_members(JsonWriter& w, const SiteSummary& site, const ProcessProfile& process) {
  w.object("hold");
  histogram_members(w, site.hold, site.hold_sum_ns, site.hold_max_ns);
  w.field("timed", site.hold_samples).field("error_ns", site.hold_error_ns).end_object();
  w.array("waited_behind");
  for (const Blame& row : site.blame) {
    w.begin_object();
    known_location_field(w, "holder", row.holder_site, process);
    stack_id_field(w, "holder_stack", row.holder_stack, Blame::kNoStack);
    w.key("holder_stack_from");
    if (row.holder_stack == Blame::kNoStack)
      w.value(nullptr);
    else
      w.value(row.holder_stack_at_acquire ? "acquire" : "release");
    stack_id_field(w, "waiter_stack", row.waiter_stack, Blame::kNoStack);
    w.field("waits", row.waits).field("wait_ns", row.wait_ns).end_object();
  }
  w.end_array();
  handoffs_field(w, site.cross_cpu_handoffs, site.same_cpu_handoffs);
  w.array("stacks");
  for (const SiteStack& row : site.stacks)
    w.begin_object()
        .field("stack", row.stack)
        .field("waits", row.waits)
        .field("wait_ns", row.wait_ns)
        .end_object();
  w.end_array().array("hold_stacks");
  for (const HoldStack& row : site.hold_stacks)
    w.begin_object()
        .field("stack", row.stack)
        .field("holds", row.holds)
        .field("hold_ns", row.hold_ns)
        .end_object();
  w.end_array();
  if (!site.acquire_stacks.empty()) {  // --stacks all
    w.array("acquire_stacks");
    for (const SiteStack& row : site.acquire_stacks)
      w.begin_object().field("stack", row.stack).field("acquisitions", row.waits).end_object();
    w.end_array();
  }
}

void site_value(JsonWriter& w, const SiteSummary& site, const ProcessProfile& process) {
  const format::OperationClass kind = format::operation_class(site.operation);
  w.begin_object().field("operation", operation_name(site.operation));
  w.field("class", kind == format::OperationClass::kAcquire   ? "acquire"
                   : kind == format::OperationClass::kRelease ? "release"
                   : kind == format::OperationClass::kWait    ? "wait"
                                                              : "event");
  w.key("caller");
  json_location_value(w, site.location, process);
  w.field("count", site.count).field("failed", site.failed);
  if (kind == format::OperationClass::kAcquire || kind == format::OperationClass::kWait) {
    w.field("contended", site.contended);
    histogram_field(w, "wait", site.wait, site.wait_sum_ns, site.wait_max_ns);
  }
  if (kind == format::OperationClass::kAcquire) acquire_site_members(w, site, process);
  if (format::is_read_side(site.operation) || format::is_write_side(site.operation))
    w.field("behind_readers", site.behind_readers).field("behind_writer", site.behind_writer);
  if (site.operation == format::Operation::kCondSignal ||
      site.operation == format::Operation::kCondBroadcast ||
      site.operation == format::Operation::kSemPost)
    w.field("with_waiters", site.with_waiters).field("without_waiters", site.without_waiters);
  if (site.operation == format::Operation::kBarrierWait) w.field("arrived_last", site.arrived_last);
  w.end_object();
}

// A hold distribution with the 95 % bound of its total's sampling error (0 when exact).
void hold_field(JsonWriter& w, const SideSummary& side) {
  w.object("hold");
  histogram_members(w, side.hold, side.hold_sum_ns, side.hold_max_ns);
  w.field("error_ns", side.hold_error_ns).end_object();
}

void side_field(JsonWriter& w, std::string_view name, const SideSummary& side) {
  w.object(name)
      .field("acquisitions", side.acquisitions)
      .field("contended", side.contended)
      .field("failed", side.failed);
  histogram_field(w, "wait", side.wait, side.wait_sum_ns, side.wait_max_ns, &side.waits_only);
  hold_field(w, side);
  w.end_object();
}

// --caller-depth / --skip-frames: the lock's contended waits by attributed frame, and those that
// stay at their call site for want of a stack (together: `contended`).
void attributed_waits_members(JsonWriter& w, const LockSummary& lock, const ProcessProfile& process,
                              const WaitAttributionRule& rule) {
  const WaitAttribution attribution = attribute_waits(process, lock.sites, rule);
  w.array("attributed_waits");
  for (const AttributedWaits& row : attribution.frames) {
    w.begin_object().key("frame");
    json_location_value(w, row.frame, process);
    w.field("waits", row.waits).field("wait_ns", row.wait_ns).end_object();
  }
  w.end_array()
      .object("waits_without_stack")
      .field("waits", attribution.without_stack_waits)
      .field("wait_ns", attribution.without_stack_wait_ns)
      .end_object();
}

void lock_value(JsonWriter& w, const LockSummary& lock, const ProcessProfile& process,
                const ReportOptions& options) {
  w.begin_object()
      .field("name", lock_name(lock))
      .field("name_source", lock_name_source_name(lock.name_source))
      .field("same_name_locks", lock.same_name_locks)
      .field("address", lock.address)
      .field("generation", lock.generation)
      .field("primitive", primitive_name(lock.primitive))
      .field("kind", lock_kind_name(lock))
      .field("capacity", lock.capacity);
  known_location_field(w, "init_site", lock.init_site, process);
  known_location_field(w, "first_use_site", lock.first_use_site, process);
  w.field("destroyed", (lock.flags & format::kLockDestroyed) != 0)
      .field("owner_died", (lock.flags & format::kLockOwnerDied) != 0)
      .field("events", lock.events)
      .field("acquisitions", lock.acquisitions)
      .field("releases", lock.releases)
      .field("contended", lock.contended)
      .field("failed", lock.failed)
      .field("owner_changes", lock.owner_changes)
      .field("reacquisitions", lock.reacquisitions)
      .field("reacquire_wait_ns", lock.reacquire_wait_ns)
      .field("wakeups", lock.wakeups)
      .field("wake_latency_ns", lock.wake_latency_ns);
  handoffs_field(w, lock.cross_cpu_handoffs, lock.same_cpu_handoffs);
  histogram_field(w, "wait", lock.wait, lock.wait_sum_ns, lock.wait_max_ns, &lock.waits_only);
  hold_field(w, lock);
  if (lock.primitive == format::Primitive::kRwLock) {
    side_field(w, "read", lock.read_side);
    side_field(w, "write", lock.write_side);
  }
  if (options.attribution) attributed_waits_members(w, lock, process, *options.attribution);
  w.array("sites");
  for (const SiteSummary& site : lock.sites) site_value(w, site, process);
  w.end_array().end_object();
}

void thread_value(JsonWriter& w, const ThreadSummary& t) {
  w.begin_object()
      .field("tid", t.tid)
      .field("name", t.name)
      .field("main", (t.flags & format::kThreadMain) != 0)
      .field("exited", (t.flags & format::kThreadExited) != 0)
      .field("acquisitions", t.acquisitions)
      .field("releases", t.releases)
      .field("contended", t.contended)
      .field("failed", t.failed);
  histogram_field(w, "wait", t.wait, t.wait_sum_ns, t.wait_max_ns, &t.waits_only);
  // Every kind of wait of a thread, by primitive; never summed together.
  w.object("waits_by_primitive_ns");
  for (uint32_t p = 1; p <= static_cast<uint32_t>(format::Primitive::kLast); ++p)
    w.field(primitive_name(static_cast<format::Primitive>(p)), t.wait_ns_by_primitive[p]);
  w.end_object().field("barrier_last_arrivals", t.barrier_last_arrivals);
  // What the profile knows of the thread's life, CPU and scheduling (absent when it does not).
  if (t.lifetime_known) w.field("start_ns", t.start_ns).field("end_ns", t.end_ns);
  if (t.cpu_known) w.field("cpu_ns", t.cpu_ns);
  if (t.sched_known)
    w.field("sched_policy", sched_policy_name(t.sched_policy))
        .field("sched_priority", t.sched_priority);
  w.end_object();
}

// The name of lock `index` of the process ("" for an index out of range: a damaged profile).
std::string lock_name_at(const ProcessProfile& process, size_t index) {
  return index < process.locks.size() ? lock_name(process.locks[index]) : std::string();
}

// Edges name locks by their index in the process's "locks" and by their names; each inversion
// lists its edges (indices into "edges") in cycle order, and the names of the locks held on it.
void lock_order_field(JsonWriter& w, const ProcessView& view) {
  const ProcessProfile& process = *view.process;
  w.object("lock_order").array("edges");
  for (const LockOrderEdge& edge : process.lock_order) {
    w.begin_object()
        .field("held", edge.from_lock)
        .field("held_name", lock_name_at(process, edge.from_lock));
    known_location_field(w, "held_taken_at", edge.from_site, process);
    w.field("taken", edge.to_lock)
        .field("taken_name", lock_name_at(process, edge.to_lock))
        .key("taken_at");
    json_location_value(w, edge.to_site, process);
    w.field("operation", operation_name(edge.to_operation));
    stack_id_field(w, "stack", edge.stack, LockOrderEdge::kNoStack);
    w.field("tid", edge.tid).end_object();
  }
  w.end_array().array("inversions");
  for (const LockOrderInversion& inversion : view.inversions) {
    w.begin_object().key("edges").values(inversion.edges).array("locks");
    for (size_t edge : inversion.edges)
      if (edge < process.lock_order.size())
        w.value(lock_name_at(process, process.lock_order[edge].from_lock));
    w.end_array().end_object();
  }
  w.end_array().end_object();
}

// Call stacks (innermost frame first), named by index from the sites' "stacks".
void stacks_field(JsonWriter& w, const ProcessProfile& process) {
  w.array("stacks");
  for (const auto& stack : process.stacks) {
    w.begin_array();
    for (const CodeLocation& frame : stack) json_location_value(w, frame, process);
    w.end_array();
  }
  w.end_array();
}

void process_value(JsonWriter& w, const ProcessView& view, const ReportOptions& options) {
  const ProcessProfile& process = *view.process;
  w.begin_object()
      .field("file", process.file)
      .field("pid", process.pid)
      .field("ppid", process.ppid)
      .field("executable", process.executable)
      .field("exec_target", process.exec_target)
      .field("exec_file", process.exec_resolved)
      .field("exec_not_profiled", process.exec_unprofilable)
      .key("arguments")
      .values(process.arguments)
      .field("start_realtime_ns", process.start_realtime_ns)
      .field("duration_ns", process.duration_ns)
      .field("ended_by", exit_path_name(process.exit_path))
      .field("exit_status", process.exit_status)
      .field("forked_from_profiled_parent", process.parent_was_profiled)
      .field("clock", process.clock_source == format::ClockSource::kTsc ? "tsc" : "monotonic")
      .field("ticks_per_second", process.ticks_per_second)
      .field("hold_sample_period", process.hold_sample_period);
  if (process.online_cpus != 0) w.field("online_cpus", process.online_cpus);
  w.object("counters");
  for (uint32_t id = 1; id <= kLastCounterId; ++id) {
    const auto counter = static_cast<format::Counter>(id);
    w.field(describe_counter(counter).json_key, process.counter(counter));
  }
  w.end_object().array("modules");
  for (const ModuleSummary& m : process.modules)
    w.begin_object()
        .field("path", m.path)
        .field("build_id", m.build_id_hex)
        .field("load_bias", m.load_bias)
        .end_object();
  w.end_array().array("threads");
  for (const ThreadSummary& t : process.threads) thread_value(w, t);
  w.end_array().array("locks");
  for (const LockSummary& lock : process.locks) lock_value(w, lock, process, options);
  w.end_array();
  lock_order_field(w, view);
  stacks_field(w, process);
  json_trace_field(w, view);
  w.end_object();
}

// The diagnosis (analysis/diagnosis/finding.h), ranked: the verdict first. A finding's locks are
// named as the processes' "locks" are, and located by process and lock index; its sites are
// locations of the process of its first lock.
void findings_field(JsonWriter& w, const ProfileViews& views) {
  const std::vector<ProcessProfile>& processes = views.profile().processes;
  w.array("findings");
  for (const Finding& finding : views.findings()) {
    w.begin_object()
        .field("rule", finding.rule)
        .field("severity", severity_name(finding.severity))
        .field("title", finding.title)
        .array("locks");
    for (const FindingLock& at : finding.locks) {
      const LockSummary& lock = views.lock(at);
      w.begin_object()
          .field("process", at.process)
          .field("pid", processes[at.process].pid)
          .field("index", at.lock)
          .field("name", lock_name(lock))
          .field("name_source", lock_name_source_name(lock.name_source))
          .field("address", lock.address)
          .field("generation", lock.generation)
          .end_object();
    }
    w.end_array().array("sites");
    if (const ProcessProfile* process = finding_process(views, finding))
      for (const CodeLocation& site : finding.sites) json_location_value(w, site, *process);
    w.end_array();
    evidence_array(w, "evidence", finding.evidence);
    w.field("advice", finding.advice)
        .field("time_at_stake_ns", finding.time_at_stake_ns)
        .end_object();
  }
  w.end_array();
}

class JsonReportWriter final : public ReportWriter {
 public:
  using ReportWriter::write;
  void write(const ProfileViews& views, const ReportOptions& options, ReportSink& sink) override {
    const Profile& profile = views.profile();
    // The CLI repairs every string before (repair_profile_strings); a string that still is not
    // UTF-8 (a caller that did not) gets U+FFFD rather than an exception and no report.
    JsonWriter w(sink.stream(), {.indent = 2});
    w.begin_object()
        .field("schema", "lockscope-report")
        .field("schema_version", kJsonSchemaVersion)
        .field("directory", profile.directory);
    if (profile.repaired_strings) w.field("repaired_strings", profile.repaired_strings);
    if (options.attribution)
      w.object("wait_attribution")
          .field("caller_depth", options.attribution->caller_depth)
          .field("skip_frames", options.attribution->skip_frames)
          .end_object();
    w.array("problems");
    for (const ProfileProblem& problem : profile.problems)
      w.begin_object().field("file", problem.file).field("problem", problem.message).end_object();
    w.end_array().array("processes");
    for (const ProcessView& view : views.processes()) process_value(w, view, options);
    w.end_array();
    findings_field(w, views);
    w.end_object();
    w.finish();
    sink.stream() << '\n';
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_json_report_writer() {
  return std::make_unique<JsonReportWriter>();
}

}  // namespace lockscope
