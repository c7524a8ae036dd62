// The html format (-f html, -o report.html): one self-contained page (html_page.h) that draws the
// report's views from one JSON document, which this writer fills from the shared views and never
// works out itself:
//   - first, the findings (analysis/diagnosis): the verdict, then each finding with its locks by
//     name, its source lines, the figures it rests on and its advice;
//   - flame graphs: each process's lock waits and lock holds by call stack (weighted_stacks.h),
//     the process as root frame and the lock as leaf, drawn by d3-flame-graph; the page opens on
//     --weight's and switches to the other;
//   - the locks table (lock_rows.h: the text report's columns and order, --sort, --all), each
//     lock's contended waits as a histogram of the log-linear buckets (LatencyHistogram);
//   - the blame table: contended waits by waiter site and stack and holder site and stack
//     (SiteSummary::blame);
//   - a traced process's timeline (trace_intervals.h): each thread's waits against its holds, the
//     first kTimelineIntervals of them by time;
//   - the text report's notes (footer_text.h): what was dropped or is estimated.
// The document is written as it goes (json_writer.h), never held as a tree.
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <map>
#include <sstream>

#include "analysis/lock_names.h"
#include "analysis/trace_intervals.h"
#include "report/blame_text.h"
#include "report/footer_text.h"
#include "report/html_page.h"
#include "report/json_writer.h"
#include "report/location_text.h"
#include "report/lock_rows.h"
#include "report/report_writer.h"

namespace lockscope {
namespace {

// Intervals drawn per process: an SVG of more slows the page down more than it shows.
constexpr size_t kTimelineIntervals = 20000;

// The frame under which a flame graph puts the stacks that were not captured (weighted_stacks.h).
constexpr const char* kNotCaptured = kStackNotCapturedFrame;

// A flame graph's tree ({name, value, count, children, kind}), each node's value its subtree's;
// kind marks the root ("process"), the leaves ("lock") and kNotCaptured ("not-captured").
void flame_tree(JsonWriter& w, const ProcessProfile& process, StackWeight weight) {
  struct Node {
    Node(std::string node_name, const char* node_kind)
        : name(std::move(node_name)), kind(node_kind) {}
    std::string name;
    const char* kind;  // nullptr: a frame of a call stack
    uint64_t value = 0, count = 0;
    std::map<std::string, size_t> children;  // by name, into nodes
  };
  std::vector<Node> nodes;
  nodes.emplace_back(process_frame_name(process), "process");
  for (const WeightedStack& stack : weighted_stacks(process, weight)) {
    std::vector<std::pair<std::string, const char*>> path;
    if (!stack.captured) path.emplace_back(kNotCaptured, "not-captured");
    for (const CodeLocation& frame : stack.frames) path.emplace_back(frame.label, nullptr);
    path.emplace_back(lock_frame_name(*stack.lock, stack.operation), "lock");
    size_t at = 0;
    nodes[0].value += stack.weight_ns;
    nodes[0].count += stack.count;
    for (auto& [name, kind] : path) {
      const auto [child, added] = nodes[at].children.try_emplace(name, nodes.size());
      at = child->second;  // before emplace_back, which may move the map `child` is in
      if (added) nodes.emplace_back(std::move(name), kind);
      nodes[at].value += stack.weight_ns;
      nodes[at].count += stack.count;
    }
  }
  const auto write_node = [&](const auto& self, size_t at) -> void {
    const Node& node = nodes[at];
    w.begin_object().field("name", node.name).field("value", node.value).field("count", node.count);
    if (node.kind) w.field("kind", node.kind);
    w.array("children");
    for (const auto& [name, child] : node.children) self(self, child);
    w.end_array().end_object();
  };
  write_node(write_node, 0);
}

// Each row's cells (the text report's, column by column) and its contended waits' histogram bins
// as [lower ns, upper ns, count].
void lock_rows(JsonWriter& w, std::string_view name, const std::vector<LockRow>& rows) {
  w.array(name);
  for (const LockRow& row : rows) {
    w.begin_object()
        .field("pid", row.process->pid)
        .field("name", lock_name(*row.lock))
        .field("phrase", lock_name_phrase(*row.lock))
        .array("cells");
    for (const LockColumn& column : lock_columns()) w.value(column.text(row));
    w.end_array().array("waits");
    for (const LatencyHistogram::Bin& bin : row.figures().waits_only.bins())
      w.begin_array()
          .value(LogHistogramLayout::lower_ns(bin.bucket))
          .value(LogHistogramLayout::upper_ns(bin.bucket))
          .value(bin.count)
          .end_array();
    w.end_array().end_object();
  }
  w.end_array();
}

// The columns (as lock_rows.h defines them) and the rows: locks, then the other primitives.
void locks_table(JsonWriter& w, const Profile& profile, const ReportOptions& options) {
  w.begin_object().field("sort", options.sort_key).array("columns");
  for (const LockColumn& column : lock_columns())
    w.begin_object()
        .field("key", column.key)
        .field("header", column.header)
        .field("legend", column.legend)
        .field("left", column.left_aligned)
        .end_object();
  w.end_array();
  std::vector<LockRow> locks, others;  // as the text report lists them apart (is_lock_row)
  for (LockRow& row : sorted_lock_rows(profile, options.sort_key, options.all))
    (is_lock_row(row) ? locks : others).push_back(std::move(row));
  lock_rows(w, "rows", locks);
  lock_rows(w, "others", others);
  w.end_object();
}

// The rows of SiteSummary::blame, by wait time; the stacks they name, innermost frame first.
void blame_table(JsonWriter& w, const ProcessProfile& process) {
  std::vector<size_t> stacks;            // into process.stacks, in the order first named
  std::map<size_t, size_t> stack_index;  // process.stacks -> stacks
  const auto stack_id = [&](std::string_view name, size_t stack) {
    w.key(name);
    if (stack >= process.stacks.size()) {
      w.value(nullptr);
      return;
    }
    auto [at, added] = stack_index.try_emplace(stack, stack_index.size());
    if (added) stacks.push_back(stack);
    w.value(at->second);
  };
  std::vector<std::pair<const LockSummary*, const SiteSummary*>> sites;
  std::vector<const Blame*> blames;
  for (const LockSummary& lock : process.locks)
    for (const SiteSummary& site : lock.sites)
      for (const Blame& row : site.blame) {
        sites.emplace_back(&lock, &site);
        blames.push_back(&row);
      }
  std::vector<size_t> order(blames.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return blames[a]->wait_ns > blames[b]->wait_ns; });
  w.begin_object().array("rows");
  for (size_t i : order) {
    const auto [lock, site] = sites[i];
    const Blame& row = *blames[i];
    w.begin_object()
        .field("lock", lock_frame_name(*lock, site->operation))
        .field("waiter", site->location.label);
    stack_id("waiter_stack", row.waiter_stack);
    w.field("holder", row.holder_site.known() ? row.holder_site.label : kUnknownHolderLabel);
    stack_id("holder_stack", row.holder_stack);
    w.key("holder_stack_from");
    if (row.holder_stack == Blame::kNoStack)
      w.value(nullptr);
    else
      w.value(row.holder_stack_at_acquire ? "acquire" : "release");
    w.field("waits", row.waits).field("wait_ns", row.wait_ns).end_object();
  }
  w.end_array().array("stacks");
  for (size_t stack : stacks) {
    w.begin_array();
    for (const CodeLocation& frame : process.stacks[stack])
      for (const std::string& line : stack_frame_lines(frame)) w.value(line);
    w.end_array();
  }
  w.end_array().end_object();
}

// Each thread's waits and holds as [thread, begin ns, end ns, lock]: indexes into threads and
// locks, times since the process started; the earliest kTimelineIntervals of them.
void timeline(JsonWriter& w, const ProcessView& view) {
  const ProcessProfile& process = *view.process;
  if (!process.trace.present) {
    w.value(nullptr);
    return;
  }
  const ProcessTrace& trace = process.trace;
  const TraceNames& names = *view.trace_names;
  const TraceIntervals& intervals = view.trace_intervals;
  std::map<uint32_t, size_t> thread_index;
  for (const auto& [tid, name] : names.threads())
    thread_index.try_emplace(tid, thread_index.size());
  std::vector<std::string_view> locks;
  std::map<std::string, size_t> lock_index;
  const auto lock_id = [&](const TraceRecord& call, format::Operation operation) {
    auto [at, added] = lock_index.try_emplace(names.lock(call, operation), lock_index.size());
    if (added) locks.push_back(at->first);
    return at->second;
  };
  struct Interval {
    uint64_t begin_ns, end_ns;
    const TraceRecord* call;
    bool wait;
  };
  std::vector<Interval> all;
  for (const TraceWait& wait : intervals.waits)
    all.push_back({wait.begin_ns, wait.end_ns, &trace.events[wait.call], true});
  for (const TraceHold& hold : intervals.holds)
    all.push_back({hold.begin_ns, hold.end_ns, &trace.events[hold.acquire], false});
  std::stable_sort(all.begin(), all.end(),
                   [](const Interval& a, const Interval& b) { return a.begin_ns < b.begin_ns; });
  const size_t shown = std::min(all.size(), kTimelineIntervals);
  // [thread, begin, end, lock] of the shown waits (wait = true) or holds; locks are named as met.
  std::vector<std::array<uint64_t, 4>> rows[2];
  for (size_t i = 0; i < shown; ++i) {
    const Interval& interval = all[i];
    const format::Operation operation =
        interval.wait || format::is_read_side(interval.call->operation) ? interval.call->operation
                                                                        : format::Operation::kLock;
    rows[interval.wait].push_back({thread_index[interval.call->tid], interval.begin_ns,
                                   std::max(interval.begin_ns, interval.end_ns),
                                   lock_id(*interval.call, operation)});
  }
  w.begin_object().array("threads");
  for (const auto& [tid, name] : names.threads())
    w.begin_object().field("tid", tid).field("name", name).end_object();
  w.end_array().key("locks").values(locks);
  for (const auto& [name, list] : {std::pair{"waits", &rows[1]}, std::pair{"holds", &rows[0]}}) {
    w.array(name);
    for (const auto& row : *list) w.values(row);
    w.end_array();
  }
  w.field("shown", shown)
      .field("intervals", all.size())
      .field("lost", trace.lost())
      .field("duration_ns", process.duration_ns)
      .end_object();
}

// The findings, ranked (the verdict first): each with its locks by name (and as prose: "mutex
// first taken at serve_requests kvcache_demo.cpp:83"), its source lines, its evidence as people
// read it, its advice and the time at stake.
void findings(JsonWriter& w, const ProfileViews& views) {
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
          .field("pid", views.profile().processes[at.process].pid)
          .field("name", lock_name(lock))
          .field("phrase", lock_name_phrase(lock))
          .end_object();
    }
    w.end_array().array("sites");
    for (const CodeLocation& site : finding.sites) w.value(site.label);
    w.end_array().array("evidence");
    for (const Evidence& evidence : finding.evidence)
      w.begin_object().field("key", evidence.key).field("text", evidence.text).end_object();
    w.end_array()
        .field("advice", finding.advice)
        .field("time_at_stake_ns", finding.time_at_stake_ns)
        .end_object();
  }
  w.end_array();
}

class HtmlReportWriter final : public ReportWriter {
 public:
  using ReportWriter::write;
  void write(const ProfileViews& views, const ReportOptions& options, ReportSink& sink) override {
    const Profile& profile = views.profile();
    std::ostringstream notes;
    write_footer(profile, notes);
    write_html_page(sink.stream(), [&](JsonWriter& w) {
      w.begin_object()
          .field("directory", profile.directory)
          .field("command", options.command)
          .field("weight", stack_weight_name(options.weight))
          .field("notes", notes.str());
      findings(w, views);
      w.key("locks");
      locks_table(w, profile, options);
      w.array("processes");
      for (const ProcessView& view : views.processes()) {
        const ProcessProfile& process = *view.process;
        w.begin_object()
            .field("pid", process.pid)
            .field("name", process_frame_name(process))
            .key("arguments")
            .values(process.arguments)
            .object("flame")
            .key("wait");
        flame_tree(w, process, StackWeight::kWait);
        w.key("hold");
        flame_tree(w, process, StackWeight::kHold);
        w.end_object().key("blame");
        blame_table(w, process);
        w.key("timeline");
        timeline(w, view);
        w.end_object();
      }
      w.end_array().end_object();
    });
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_html_report_writer() {
  return std::make_unique<HtmlReportWriter>();
}

}  // namespace lockscope
