// The chrome format (-f chrome, -o x.trace.json): a traced profile (record --trace) as Trace Event
// JSON, which Perfetto (ui.perfetto.dev) and chrome://tracing open, from the one timeline view of
// analysis/trace_intervals.h:
//   - each wait a complete event ("X", cat "wait") on the waiting thread (pid, tid);
//   - each hold of a lock a complete event (cat "hold") on the lock's own track: a synthetic
//     thread of the process named after the lock ("mutex 0x55d1c0"), listed after the real
//     threads. Read holds of an rwlock overlap one another, so each reader has a track of its own
//     ("rwlock 0x55d1c0 (read) by 4711"); exclusive holds share the lock's;
//   - a flow arrow ("s" to "f", bp "e", cat "handoff") from the hold that let a contended
//     acquisition in (at its release) to the end of the wait, where the trace identifies it;
//   - "M" events naming the processes and threads.
// Times are the trace's clock, in microseconds (fractions to the nanosecond), since the first
// traced process started: a later process (a fork's child) is offset by its later start.
//
// A profile recorded without --trace has no events to draw: an error, before anything is written.
#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

#include "analysis/trace_intervals.h"
#include "report/json_writer.h"
#include "report/report_writer.h"

namespace lockscope {
namespace {

// Synthetic tids of lock tracks: above any kernel's pid_max (2^22), within chrome's 32-bit tids.
constexpr uint32_t kLockTrackBase = 1u << 30;
// A flow binds to the slice that encloses its time, and a slice ends at ts + dur exclusive in
// Perfetto's importer: a flow at a slice's end is placed this much (1 ns) inside it.
constexpr double kInsideSliceUs = 0.001;

class ProcessTimeline {
 public:
  // `view` of a traced process: its intervals and names, computed once (profile_views.h).
  ProcessTimeline(const ProcessView& view, double offset_us, JsonWriter& w, uint32_t& next_track)
      : process_(*view.process),
        trace_(view.process->trace),
        offset_us_(offset_us),
        w_(w),
        next_track_(next_track),
        intervals_(view.trace_intervals),
        names_(*view.trace_names) {}

  void write(uint64_t& next_flow) {
    metadata("process_name", 0).field("name", process_frame_name(process_));
    end_event();
    thread_names();
    const TraceIntervals& intervals = intervals_;
    for (const TraceWait& wait : intervals.waits) {
      const TraceRecord& call = trace_.events[wait.call];
      w_.begin_object()
          .field("ph", "X")
          .field("cat", "wait")
          .field("name", "wait " + lock_name(call, call.operation))
          .field("pid", process_.pid)
          .field("tid", call.tid)
          .field("ts", us(wait.begin_ns))
          .field("dur", duration_us(wait.begin_ns, wait.end_ns))
          .object("args")
          .field("operation", operation_name(call.operation))
          .field("site", trace_.sites[call.site].label)
          .field("wait_ns", wait.wait_ns);
      if (call.flags & format::kTraceTimedOut)
        w_.field("timed_out", true);
      else if (format::trace_interrupted(call.flags))
        w_.field("interrupted", true);
      else if (call.flags & format::kTraceFailed)
        w_.field("failed", true);
      end_event();
    }
    const std::vector<uint64_t> ends = hold_ends(intervals.holds);
    for (size_t h = 0; h < intervals.holds.size(); ++h) hold(intervals.holds[h], ends[h]);
    for (const TraceHandoff& handoff : intervals.handoffs) {
      const TraceHold& hold = intervals.holds[handoff.hold];
      const TraceWait& wait = intervals.waits[handoff.wait];
      const uint32_t waiter = trace_.events[wait.call].tid;
      // A release is stamped when its call returned, which can be after the waiter has the lock
      // (see hold_ends): the arrow starts no later than the acquisition.
      const double released = inside_end(hold.begin_ns, std::min(ends[handoff.hold], wait.end_ns));
      const double acquired = inside_end(wait.begin_ns, wait.end_ns);
      const uint64_t id = next_flow++;
      const uint32_t holder_track = track_of(hold);
      w_.begin_object()
          .field("ph", "s")
          .field("cat", "handoff")
          .field("name", "handoff")
          .field("id", id)
          .field("pid", process_.pid)
          .field("tid", holder_track)
          .field("ts", released)
          .end_object();
      w_.begin_object()
          .field("ph", "f")
          .field("bp", "e")
          .field("cat", "handoff")
          .field("name", "handoff")
          .field("id", id)
          .field("pid", process_.pid)
          .field("tid", waiter)
          .field("ts", acquired)
          .end_object();
    }
    for (const auto& [key, track] : tracks_) {
      metadata("thread_name", track.tid).field("name", track.name);
      end_event();
      metadata("thread_sort_index", track.tid).field("sort_index", track.tid);
      end_event();
    }
  }

 private:
  struct Track {
    uint32_t tid;
    std::string name;
  };

  double us(uint64_t ns) const { return offset_us_ + double(ns) / 1000.0; }
  // From the nanoseconds, so that a slice's ts + dur is its end's ts to the nanosecond.
  static double duration_us(uint64_t begin_ns, uint64_t end_ns) {
    return double(end_ns - std::min(begin_ns, end_ns)) / 1000.0;
  }
  double inside_end(uint64_t begin_ns, uint64_t end_ns) const {
    return std::max(us(begin_ns), us(end_ns) - kInsideSliceUs);
  }

  // An "M" event naming `tid` (0: the process), open at its args for the caller's fields.
  JsonWriter& metadata(const char* name, uint32_t tid) {
    return w_.begin_object()
        .field("ph", "M")
        .field("name", name)
        .field("pid", process_.pid)
        .field("tid", tid)
        .object("args");
  }
  void end_event() { w_.end_object().end_object(); }

  void thread_names() {
    for (const auto& [tid, name] : names_.threads()) {
      metadata("thread_name", tid).field("name", name);
      end_event();
    }
  }

  std::string lock_name(const TraceRecord& event, format::Operation operation) const {
    return names_.lock(event, operation);
  }

  // The lock's track, or for a read hold its reader's on that lock.
  uint32_t track_of(const TraceHold& hold) {
    const TraceRecord& acquired = trace_.events[hold.acquire];
    const bool read = format::is_read_side(acquired.operation);
    const auto key = std::make_tuple(acquired.object, acquired.generation, read ? acquired.tid : 0);
    auto [at, added] = tracks_.try_emplace(key);
    if (added) {
      at->second.tid = next_track_++;
      at->second.name = read ? lock_name(acquired, format::Operation::kReadLock) + " by " +
                                   std::to_string(acquired.tid)
                             : lock_name(acquired, format::Operation::kLock);
    }
    return at->second.tid;
  }

  // Each hold's end as drawn (ns). Holds of one track by different threads never overlap in the
  // program, but a release is stamped when its unlock call returns, which can be well after the
  // next thread has the lock (the futex wake, a preemption: hundreds of µs seen), while an
  // acquisition is stamped once the lock is held. So a hold is drawn to no later than the next
  // hold by another thread begins; a hold by the same thread inside it (recursive) nests.
  std::vector<uint64_t> hold_ends(const std::vector<TraceHold>& holds) {
    std::vector<uint64_t> ends(holds.size());
    std::map<uint32_t, std::vector<size_t>> by_track;
    for (size_t h = 0; h < holds.size(); ++h) {
      ends[h] = holds[h].end_ns;
      by_track[track_of(holds[h])].push_back(h);
    }
    const auto tid = [&](size_t h) { return trace_.events[holds[h].acquire].tid; };
    for (auto& [track, list] : by_track) {
      std::sort(list.begin(), list.end(), [&](size_t a, size_t b) {
        return std::tie(holds[a].begin_ns, a) < std::tie(holds[b].begin_ns, b);
      });
      // Backwards: the nearest later hold, and the nearest later one by another thread than it.
      constexpr size_t kNone = SIZE_MAX;
      size_t next = kNone, next_other = kNone;
      for (size_t i = list.size(); i-- > 0;) {
        const size_t h = list[i];
        const size_t bound = next != kNone && tid(next) != tid(h) ? next : next_other;
        if (bound != kNone)
          ends[h] = std::max(holds[h].begin_ns, std::min(ends[h], holds[bound].begin_ns));
        if (next == kNone || tid(next) != tid(h)) next_other = next;
        next = h;
      }
    }
    return ends;
  }

  void hold(const TraceHold& hold, uint64_t end_ns) {
    const TraceRecord& acquired = trace_.events[hold.acquire];
    const uint32_t track = track_of(hold);
    w_.begin_object()
        .field("ph", "X")
        .field("cat", "hold")
        .field("name", "held by " + std::to_string(acquired.tid))
        .field("pid", process_.pid)
        .field("tid", track)
        .field("ts", us(hold.begin_ns))
        .field("dur", duration_us(hold.begin_ns, end_ns))
        .object("args")
        .field("tid", acquired.tid)
        .field("acquired_at", trace_.sites[acquired.site].label)
        .field("hold_ns", hold.hold_ns);
    if (hold.end == TraceHold::kNoEvent)
      w_.field("open", true);  // still held where the thread's trace ends
    else if (trace_.events[hold.end].kind == format::TraceKind::kHoldPause)
      w_.field("let_go_by", "condition wait");
    else
      w_.field("released_at", trace_.sites[trace_.events[hold.end].site].label);
    if (hold.resumed) w_.field("taken_back_by", "condition wait");
    end_event();
  }

  const ProcessProfile& process_;
  const ProcessTrace& trace_;
  double offset_us_;
  JsonWriter& w_;
  uint32_t& next_track_;  // over the file: images of one pid (exec) have the same pid
  const TraceIntervals& intervals_;
  const TraceNames& names_;
  std::map<std::tuple<uint64_t, uint32_t, uint32_t>, Track> tracks_;  // (lock, generation, reader)
};

class ChromeTraceReportWriter final : public ReportWriter {
 public:
  using ReportWriter::write;
  void write(const ProfileViews& views, const ReportOptions&, ReportSink& sink) override {
    const Profile& profile = views.profile();
    uint64_t first_start = UINT64_MAX;
    for (const ProcessProfile& process : profile.processes)
      if (process.trace.present) first_start = std::min(first_start, process.start_realtime_ns);
    if (first_start == UINT64_MAX)
      throw std::invalid_argument(
          "the chrome format draws traced events, and this profile has none: record it with "
          "`lockscope record --trace`");
    // Compact, streamed as the events are made (a trace may hold millions).
    JsonWriter w(sink.stream(), {.indent = -1});
    w.begin_object()
        .field("displayTimeUnit", "ns")
        .object("otherData")
        .field("exporter", "lockscope")
        .field("directory", profile.directory)
        .end_object()
        .array("traceEvents");
    uint64_t next_flow = 1;
    uint32_t next_track = kLockTrackBase;
    for (const ProcessView& view : views.processes()) {
      if (!view.process->trace.present) continue;
      const double offset_us = double(view.process->start_realtime_ns - first_start) / 1000.0;
      ProcessTimeline(view, offset_us, w, next_track).write(next_flow);
    }
    w.end_array().end_object().finish();
    sink.stream() << '\n';
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_chrome_trace_report_writer() {
  return std::make_unique<ChromeTraceReportWriter>();
}

}  // namespace lockscope
