// The SQLite report (-f sqlite, -o prof.db): the profile as tables for ad-hoc SQL, every table and
// column documented in docs/sqlite-schema.md. Raw values: counts as integers, times as integer
// nanoseconds (columns ending in _ns), booleans 0/1, a code location as function, file, line,
// module, offset, label and inlined_into columns (NULL where not known). Rows are joined by ids:
// process_id, lock_id, site_id, stack_id, each unique over the whole file.
//
// Written through SQLite's C API to the sink's path, in one transaction with prepared statements:
// a traced run has a row per event, and a row each is far slower outside a transaction.
#include <fmt/core.h>

#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "analysis/lock_names.h"
#include "analysis/trace_intervals.h"
#include "analysis/wait_attribution.h"
#include "report/json_writer.h"
#include "report/report_writer.h"
#include "report/sqlite_database.h"
#include "report/sqlite_schema.h"

namespace lockscope {
namespace {

// The arguments column: a compact JSON array of strings (sqlite's json_each reads it).
std::string json_array(const std::vector<std::string>& items) {
  std::ostringstream out;
  JsonWriter(out, {.indent = -1}).values(items).finish();
  return out.str();
}

std::optional<std::string> text_or_null(const std::string& text) {
  return text.empty() ? std::nullopt : std::optional<std::string>(text);
}

// The location_columns() of sqlite_schema.h; all NULL for an unknown location.
void add_location(SqliteStatement& row, const CodeLocation& where, const ProcessProfile& process) {
  if (!where.known()) {
    for (size_t i = 0; i < kLocationColumnCount; ++i) row.add(std::nullopt);
    return;
  }
  row.add(text_or_null(where.function))
      .add(text_or_null(where.file))
      .add(where.line ? std::optional<int>(where.line) : std::nullopt)
      .add(where.module < process.modules.size()
               ? std::optional<std::string>(process.modules[where.module].path)
               : std::nullopt)
      .add(where.offset)
      .add(where.label)
      .add(where.inlined_from.empty() ? std::nullopt
                                      : std::optional<std::string>(where.inlined_from.front()));
}

std::optional<int64_t> id_or_null(size_t index, size_t none, int64_t base) {
  return index == none ? std::nullopt : std::optional<int64_t>(base + int64_t(index));
}

const char* class_name(format::Operation operation) {
  switch (format::operation_class(operation)) {
    case format::OperationClass::kAcquire:
      return "acquire";
    case format::OperationClass::kRelease:
      return "release";
    case format::OperationClass::kWait:
      return "wait";
    default:
      return "event";
  }
}

class SqliteWriter {
 public:
  explicit SqliteWriter(SqliteDatabase& db)
      : processes_(db.prepare(insert_sql("processes"))),
        threads_(db.prepare(insert_sql("threads"))),
        locks_(db.prepare(insert_sql("locks"))),
        sites_(db.prepare(insert_sql("sites"))),
        stacks_(db.prepare(insert_sql("stacks"))),
        frames_(db.prepare(insert_sql("frames"))),
        site_stacks_(db.prepare(insert_sql("site_stacks"))),
        blame_(db.prepare(insert_sql("blame"))),
        lock_order_(db.prepare(insert_sql("lock_order"))),
        trace_files_(db.prepare(insert_sql("trace_files"))),
        events_(db.prepare(insert_sql("events"))),
        findings_(db.prepare(insert_sql("findings"))),
        finding_locks_(db.prepare(insert_sql("finding_locks"))),
        finding_sites_(db.prepare(insert_sql("finding_sites"))),
        finding_evidence_(db.prepare(insert_sql("finding_evidence"))) {}

  void process(const ProcessView& view) {
    const ProcessProfile& process = *view.process;
    const int64_t process_id = next_process_++;
    processes_.insert(
        process_id, process.pid, process.ppid, process.executable, json_array(process.arguments),
        text_or_null(process.exec_target), text_or_null(process.exec_resolved),
        text_or_null(process.exec_unprofilable), process.file, process.start_realtime_ns,
        process.duration_ns, exit_path_name(process.exit_path), process.exit_status,
        process.clock_source == format::ClockSource::kTsc ? "tsc" : "monotonic",
        process.ticks_per_second, process.hold_sample_period, int(process.trace.present),
        int(process.trace.cut_short), process.trace.lost());
    for (const ThreadSummary& thread : process.threads) {
      threads_.add(process_id)
          .add(thread.tid)
          .add(thread.name)
          .add(int((thread.flags & format::kThreadMain) != 0))
          .add(int((thread.flags & format::kThreadExited) != 0))
          .add(thread.acquisitions)
          .add(thread.releases)
          .add(thread.contended)
          .add(thread.failed)
          .add(thread.wait_sum_ns)
          .add(thread.wait_max_ns);
      for (format::Primitive primitive : kWaitPrimitives)
        threads_.add(thread.wait_ns_by_primitive[static_cast<uint32_t>(primitive)]);
      threads_.add(thread.barrier_last_arrivals).insert();
    }
    const int64_t stack_base = next_stack_;
    for (size_t s = 0; s < process.stacks.size(); ++s)
      stack(process_id, s, process.stacks[s], process);
    const int64_t lock_base = next_lock_;
    lock_bases_.push_back(lock_base);
    for (const LockSummary& lock : process.locks) this->lock(process_id, lock, process, stack_base);
    for (const LockOrderEdge& edge : process.lock_order) {
      lock_order_.add(process_id)
          .add(lock_base + int64_t(edge.from_lock))
          .add(lock_base + int64_t(edge.to_lock));
      add_location(lock_order_, edge.from_site, process);
      add_location(lock_order_, edge.to_site, process);
      lock_order_.add(operation_name(edge.from_operation))
          .add(operation_name(edge.to_operation))
          .add(edge.tid)
          .add(id_or_null(edge.stack, LockOrderEdge::kNoStack, stack_base))
          .insert();
    }
    if (process.trace.present) trace(process_id, view, lock_base);
  }

  // After every process: the findings name their locks by the ids given above (lock_bases_).
  void findings(const ProfileViews& views) {
    int64_t finding_id = 1;
    for (const Finding& finding : views.findings()) {
      const ProcessProfile* site_process = finding_process(views, finding);
      const int64_t site_process_id =
          site_process ? int64_t(site_process - views.profile().processes.data()) + 1 : 0;
      findings_.add(finding_id)
          .add(finding.rule)
          .add(severity_name(finding.severity))
          .add(finding.title);
      if (finding.locks.empty()) {
        findings_.add(std::nullopt).add(std::nullopt).add(std::nullopt);
      } else {
        const FindingLock& first = finding.locks.front();
        findings_.add(int64_t(first.process) + 1)
            .add(lock_bases_[first.process] + int64_t(first.lock))
            .add(lock_name(views.lock(first)));
      }
      if (finding.sites.empty() || site_process == nullptr)
        for (size_t i = 0; i < kLocationColumnCount; ++i) findings_.add(std::nullopt);
      else
        add_location(findings_, finding.sites.front(), *site_process);
      findings_.add(finding.advice).add(finding.time_at_stake_ns).insert();
      for (size_t rank = 0; rank < finding.locks.size(); ++rank) {
        const FindingLock& lock = finding.locks[rank];
        finding_locks_.insert(finding_id, rank, int64_t(lock.process) + 1,
                              lock_bases_[lock.process] + int64_t(lock.lock));
      }
      if (site_process != nullptr)
        for (size_t rank = 0; rank < finding.sites.size(); ++rank) {
          finding_sites_.add(finding_id).add(rank).add(site_process_id);
          add_location(finding_sites_, finding.sites[rank], *site_process);
          finding_sites_.insert();
        }
      for (size_t rank = 0; rank < finding.evidence.size(); ++rank) {
        const Evidence& evidence = finding.evidence[rank];
        finding_evidence_.insert(finding_id, rank, evidence.key, evidence.value, evidence.text);
      }
      ++finding_id;
    }
  }

 private:
  void stack(int64_t process_id, size_t index, const std::vector<CodeLocation>& frames,
             const ProcessProfile& process) {
    const int64_t stack_id = next_stack_++;
    size_t depth = 0;
    for (size_t physical = 0; physical < frames.size(); ++physical) {
      // The physical frame, then the functions it was inlined into: each a logical frame; all
      // but the last of them were inlined into the next one.
      const std::vector<CodeLocation> logical = logical_frames({frames[physical]});
      for (size_t i = 0; i < logical.size(); ++i) {
        frames_.add(stack_id).add(depth++).add(physical).add(int(i + 1 < logical.size()));
        add_location(frames_, logical[i], process);
        frames_.insert();
      }
    }
    stacks_.insert(stack_id, process_id, index, depth, frames.size());
  }

  void lock(int64_t process_id, const LockSummary& lock, const ProcessProfile& process,
            int64_t stack_base) {
    const int64_t lock_id = next_lock_++;
    locks_.add(lock_id)
        .add(process_id)
        .add(lock.address)
        .add(fmt::format("0x{:x}", lock.address))
        .add(lock.generation)
        .add(primitive_name(lock.primitive))
        .add(lock_kind_name(lock))
        .add(lock_name(lock))
        .add(lock_name_source_name(lock.name_source))
        .add(lock.same_name_locks)
        .add(lock.capacity)
        .add(int((lock.flags & format::kLockDestroyed) != 0))
        .add(int((lock.flags & format::kLockOwnerDied) != 0))
        .add(lock.acquisitions)
        .add(lock.releases)
        .add(lock.contended)
        .add(lock.failed)
        .add(lock.wait_sum_ns)
        .add(lock.wait_max_ns)
        .add(lock.hold_sum_ns)
        .add(lock.hold_error_ns)
        .add(lock.hold_max_ns)
        .add(lock.owner_changes)
        .add(lock.events)
        .add(lock.reacquisitions)
        .add(lock.reacquire_wait_ns)
        .add(lock.wakeups)
        .add(lock.wake_latency_ns)
        .add(lock.cross_cpu_handoffs)
        .add(lock.same_cpu_handoffs);
    add_location(locks_, lock.init_site, process);
    add_location(locks_, lock.first_use_site, process);
    locks_.insert();
    for (const SiteSummary& site : lock.sites) {
      const int64_t site_id = next_site_++;
      sites_.add(site_id)
          .add(lock_id)
          .add(process_id)
          .add(operation_name(site.operation))
          .add(class_name(site.operation));
      add_location(sites_, site.location, process);
      sites_.add(site.count)
          .add(site.contended)
          .add(site.failed)
          .add(site.wait_sum_ns)
          .add(site.wait_max_ns)
          .add(site.hold_sum_ns)
          .add(site.hold_error_ns)
          .add(site.hold_max_ns)
          .add(site.hold_samples)
          .add(site.behind_readers)
          .add(site.behind_writer)
          .add(site.with_waiters)
          .add(site.without_waiters)
          .add(site.arrived_last)
          .add(site.cross_cpu_handoffs)
          .add(site.same_cpu_handoffs)
          .insert();
      for (const SiteStack& row : site.stacks)
        site_stacks_.insert(site_id, stack_base + int64_t(row.stack), "wait", row.waits,
                            row.wait_ns);
      for (const HoldStack& row : site.hold_stacks)
        site_stacks_.insert(site_id, stack_base + int64_t(row.stack), "hold", row.holds,
                            row.hold_ns);
      for (const SiteStack& row : site.acquire_stacks)
        site_stacks_.insert(site_id, stack_base + int64_t(row.stack), "acquire", row.waits,
                            row.wait_ns);
      for (const Blame& row : site.blame) {
        blame_.add(site_id).add(lock_id);
        add_location(blame_, row.holder_site, process);
        blame_.add(id_or_null(row.waiter_stack, Blame::kNoStack, stack_base))
            .add(id_or_null(row.holder_stack, Blame::kNoStack, stack_base))
            .add(row.holder_stack == Blame::kNoStack
                     ? std::nullopt
                     : std::optional<std::string>(row.holder_stack_at_acquire ? "acquire"
                                                                              : "release"))
            .add(row.waits)
            .add(row.wait_ns)
            .insert();
      }
    }
  }

  void trace(int64_t process_id, const ProcessView& view, int64_t lock_base) {
    const ProcessProfile& process = *view.process;
    const ProcessTrace& trace = process.trace;
    for (const TraceThread& file : trace.threads)
      trace_files_.insert(process_id, file.tid, file.file, file.events, file.overwritten,
                          file.dropped, file.filtered, int(file.closed),
                          text_or_null(file.problem));
    std::map<std::pair<uint64_t, uint32_t>, int64_t> lock_ids;
    for (size_t l = 0; l < process.locks.size(); ++l)
      lock_ids[{process.locks[l].address, process.locks[l].generation}] = lock_base + int64_t(l);
    std::map<size_t, uint64_t> wait_of_call;
    for (const TraceWait& wait : view.trace_intervals.waits) wait_of_call[wait.call] = wait.wait_ns;
    for (size_t e = 0; e < trace.events.size(); ++e) {
      const TraceRecord& event = trace.events[e];
      const bool call = format::is_call_event(event.kind) ||
                        event.kind == format::TraceKind::kHoldPause ||
                        event.kind == format::TraceKind::kHoldResume;
      events_.add(process_id)
          .add(e)
          .add(event.tid)
          .add(event.time_ns)
          .add(trace_kind_name(event.kind));
      if (call) {
        auto lock = lock_ids.find({event.object, event.generation});
        events_.add(operation_name(event.operation))
            .add(lock == lock_ids.end() ? std::nullopt : std::optional<int64_t>(lock->second))
            .add(event.object)
            .add(event.generation);
        add_location(events_, trace.sites[event.site], process);
      } else {
        for (size_t i = 0; i < 4 + kLocationColumnCount; ++i) events_.add(std::nullopt);
      }
      const bool is_kcall = event.kind == format::TraceKind::kCall;
      const auto flag = [&](uint8_t bit) {
        return is_kcall ? std::optional<int>((event.flags & bit) != 0) : std::nullopt;
      };
      auto wait = wait_of_call.find(e);
      events_.add(flag(format::kTraceWaited))
          .add(flag(format::kTraceFailed))
          .add(flag(format::kTraceTimedOut))
          .add(wait == wait_of_call.end() ? std::nullopt : std::optional<uint64_t>(wait->second))
          .add(event.kind == format::TraceKind::kThreadName ? std::optional(event.name)
                                                            : std::nullopt)
          .insert();
    }
  }

  SqliteStatement processes_, threads_, locks_, sites_, stacks_, frames_, site_stacks_, blame_,
      lock_order_, trace_files_, events_, findings_, finding_locks_, finding_sites_,
      finding_evidence_;
  int64_t next_process_ = 1, next_lock_ = 1, next_site_ = 1, next_stack_ = 1;
  std::vector<int64_t> lock_bases_;  // each process's first lock_id, by process index
};

class SqliteReportWriter final : public ReportWriter {
 public:
  using ReportWriter::write;
  void write(const ProfileViews& views, const ReportOptions&, ReportSink& sink) override {
    if (!sink.is_file())
      throw std::invalid_argument(
          "the sqlite format writes a database file, not a stream, a device or a FIFO: name a "
          "regular file (report -o FILE.db, run --report FILE.db)");
    SqliteDatabase db(sink.path());
    // No journal and no syncs: the file is new and temporary (the CLI renames it over the target
    // once complete, and removes it when writing failed), so there is nothing to roll back to.
    db.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;");
    db.execute(sqlite_schema_sql());
    db.execute("BEGIN");
    {
      SqliteWriter writer(db);
      for (const ProcessView& view : views.processes()) writer.process(view);
      writer.findings(views);
    }
    db.execute(sqlite_index_sql());
    db.execute("COMMIT");
    db.close();
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_sqlite_report_writer() {
  return std::make_unique<SqliteReportWriter>();
}

}  // namespace lockscope
