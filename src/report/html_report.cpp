// The html format (-f html, -o report.html): one self-contained page (html_page.h) that draws the
// report's views from one JSON document, which this writer fills from the shared views and never
// works out itself:
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
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/trace_intervals.h"
#include "report/footer_text.h"
#include "report/html_page.h"
#include "report/lock_rows.h"
#include "report/report_writer.h"

namespace lockscope {
namespace {

using nlohmann::json;

// Intervals drawn per process: an SVG of more slows the page down more than it shows.
constexpr size_t kTimelineIntervals = 20000;

// The frame under which a flame graph puts the stacks that were not captured (over the capture
// budget, --stack-depth 0): they stand on their call site alone, and a reader should not take
// that for a stack that began there.
constexpr const char* kNotCaptured = "(stack not captured)";

// A flame graph's tree ({name, value, count, children, kind}), each node's value its subtree's;
// kind marks the root ("process"), the leaves ("lock") and kNotCaptured ("not-captured").
json flame_tree(const ProcessProfile& process, StackWeight weight) {
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
    for (const auto& [name, kind] : path) {
      const auto [child, added] = nodes[at].children.try_emplace(name, nodes.size());
      at = child->second;  // before emplace_back, which may move the map `child` is in
      if (added) nodes.emplace_back(name, kind);
      nodes[at].value += stack.weight_ns;
      nodes[at].count += stack.count;
    }
  }
  const auto to_json = [&](const auto& self, size_t at) -> json {
    json children = json::array();
    for (const auto& [name, child] : nodes[at].children) children.push_back(self(self, child));
    json node = {{"name", nodes[at].name},
                 {"value", nodes[at].value},
                 {"count", nodes[at].count},
                 {"children", std::move(children)}};
    if (nodes[at].kind) node["kind"] = nodes[at].kind;
    return node;
  };
  return to_json(to_json, 0);
}

json locks_table(const Profile& profile, const ReportOptions& options) {
  json columns = json::array(), rows = json::array();
  for (const LockColumn& column : lock_columns())
    columns.push_back({{"key", column.key},
                       {"header", column.header},
                       {"legend", column.legend},
                       {"left", column.left_aligned}});
  for (const LockRow& row : sorted_lock_rows(profile, options.sort_key, options.all)) {
    json cells = json::array(), histogram = json::array();
    for (const LockColumn& column : lock_columns()) cells.push_back(column.text(row));
    for (const LatencyHistogram::Bin& bin : row.figures().waits_only.bins())
      histogram.push_back({LogHistogramLayout::lower_ns(bin.bucket),
                           LogHistogramLayout::upper_ns(bin.bucket), bin.count});
    rows.push_back({{"pid", row.process->pid}, {"cells", cells}, {"waits", histogram}});
  }
  return {{"columns", columns}, {"rows", rows}, {"sort", options.sort_key}};
}

// The rows of SiteSummary::blame, by wait time; the stacks they name, innermost frame first.
json blame_table(const ProcessProfile& process) {
  json rows = json::array(), stacks = json::array();
  std::map<size_t, size_t> stack_index;  // process.stacks -> stacks
  const auto stack_id = [&](size_t stack) -> json {
    if (stack >= process.stacks.size()) return nullptr;
    auto [at, added] = stack_index.try_emplace(stack, stack_index.size());
    if (added) {
      json frames = json::array();
      for (const CodeLocation& frame : process.stacks[stack]) frames.push_back(frame.label);
      stacks.push_back(std::move(frames));
    }
    return at->second;
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
  for (size_t i : order) {
    const auto [lock, site] = sites[i];
    const Blame& row = *blames[i];
    rows.push_back({{"lock", lock_frame_name(*lock, site->operation)},
                    {"waiter", site->location.label},
                    {"waiter_stack", stack_id(row.waiter_stack)},
                    {"holder", row.holder_site.known() ? row.holder_site.label
                                                       : "(not known: behind readers)"},
                    {"holder_stack", stack_id(row.holder_stack)},
                    {"holder_stack_from", row.holder_stack == Blame::kNoStack ? json(nullptr)
                                          : row.holder_stack_at_acquire       ? json("acquire")
                                                                              : json("release")},
                    {"waits", row.waits},
                    {"wait_ns", row.wait_ns}});
  }
  return {{"rows", rows}, {"stacks", stacks}};
}

// Each thread's waits and holds as [thread, begin ns, end ns, lock]: indexes into threads and
// locks, times since the process started; the earliest kTimelineIntervals of them.
json timeline(const ProcessProfile& process) {
  if (!process.trace.present) return nullptr;
  const ProcessTrace& trace = process.trace;
  const TraceNames names(process);
  const TraceIntervals intervals = trace_intervals(trace);
  json threads = json::array(), locks = json::array();
  std::map<uint32_t, size_t> thread_index;
  for (const auto& [tid, name] : names.threads()) {
    thread_index[tid] = threads.size();
    threads.push_back({{"tid", tid}, {"name", name}});
  }
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
  json waits = json::array(), holds = json::array();
  for (size_t i = 0; i < shown; ++i) {
    const Interval& interval = all[i];
    const format::Operation operation =
        interval.wait || format::is_read_side(interval.call->operation) ? interval.call->operation
                                                                        : format::Operation::kLock;
    (interval.wait ? waits : holds)
        .push_back({thread_index[interval.call->tid], interval.begin_ns,
                    std::max(interval.begin_ns, interval.end_ns),
                    lock_id(*interval.call, operation)});
  }
  return {{"threads", threads},   {"locks", locks},
          {"waits", waits},       {"holds", holds},
          {"shown", shown},       {"intervals", all.size()},
          {"lost", trace.lost()}, {"duration_ns", process.duration_ns}};
}

class HtmlReportWriter final : public ReportWriter {
 public:
  using ReportWriter::write;
  void write(const Profile& profile, const ReportOptions& options, ReportSink& sink) override {
    json processes = json::array();
    for (const ProcessProfile& process : profile.processes)
      processes.push_back({{"pid", process.pid},
                           {"name", process_frame_name(process)},
                           {"arguments", process.arguments},
                           {"flame",
                            {{"wait", flame_tree(process, StackWeight::kWait)},
                             {"hold", flame_tree(process, StackWeight::kHold)}}},
                           {"blame", blame_table(process)},
                           {"timeline", timeline(process)}});
    std::ostringstream notes;
    write_footer(profile, notes);
    const json data = {{"directory", profile.directory},
                       {"command", options.command},
                       {"weight", stack_weight_name(options.weight)},
                       {"processes", processes},
                       {"locks", locks_table(profile, options)},
                       {"notes", notes.str()}};
    write_html_page(data, sink.stream());
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_html_report_writer() {
  return std::make_unique<HtmlReportWriter>();
}

}  // namespace lockscope
