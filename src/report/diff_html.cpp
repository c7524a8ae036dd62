// `lockscope diff -f html` (-o diff.html): one self-contained page (html_page.h, template
// html/diff.html, script html/diff.js) with what the markdown diff says, in its order (the verdict
// and the gate, the findings that appeared or went away, the changes with each side's median
// [min–max], what is on one side only), and a differential flame graph of the lock wait by call
// stack (analysis/compare/stack_diff.h) drawn by d3-flame-graph: a frame as wide as its wait in
// NEW (or, switched, in BASE), red where NEW waited more, blue where it waited less.
// The page's only input is the JSON document written here; every figure in it is the comparison's
// or the stack diff's, worded by diff_wording.h as the other diff writers word it.
#include "analysis/compare/stack_diff.h"
#include "report/diff_report.h"
#include "report/diff_wording.h"
#include "report/html_page.h"
#include "report/json_writer.h"

namespace lockscope {
namespace {

using compare::Comparison;
namespace words = diff_wording;

void findings(JsonWriter& w, std::string_view name,
              const std::vector<compare::FindingChange>& list) {
  w.array(name);
  for (const compare::FindingChange& change : list)
    w.begin_object()
        .field("title", change.finding->title)
        .field("rule", change.finding->rule)
        .field("base_runs", change.base_runs)
        .field("new_runs", change.changed_runs)
        .end_object();
  w.end_array();
}

// The rows the markdown diff lists (diff_wording.h's listed_rows), worded as it words them.
void changes(JsonWriter& w, const Comparison& diff, const DiffOptions& options) {
  w.array("changes");
  for (const words::Row& row : words::listed_rows(diff, options.top, options.all)) {
    const compare::MetricChange& change = row.entity->of(row.metric);
    w.begin_object()
        .field("regression", row.regression)
        .field("what", words::entity_name(diff, row.entity->entity()))
        .field("key", row.entity->entity().key)
        .field("figure", compare::metric_name(row.metric))
        .field("base", words::spread(row.metric, change.base))
        .field("new", words::spread(row.metric, change.changed))
        .field("change", words::change(change))
        .field("ratio", words::ratio(change))
        .field("test", words::significance(change))
        .field("direction", compare::direction_name(change.direction))
        .end_object();
  }
  w.end_array();
}

// Processes and locks on one side only (their sites are listed with them in no other format).
void one_side(JsonWriter& w, std::string_view name, const Comparison& diff,
              const std::vector<const compare::EntityRuns*>& list) {
  w.array(name);
  for (const compare::EntityRuns* entity : list) {
    if (entity->kind == compare::EntityKind::kSite) continue;
    w.begin_object()
        .field("what", words::entity_name(diff, *entity))
        .field("key", entity->key)
        .field("wait", words::spread(compare::Metric::kWaitNs,
                                     compare::spread_of(entity->of(compare::Metric::kWaitNs))))
        .end_object();
  }
  w.end_array();
}

// {name, kind, value: NEW's wait, base: BASE's, delta: NEW − BASE, children}: d3-flame-graph's
// tree, each node's value its subtree's (the stacks' medians added up).
void flame_node(JsonWriter& w, const compare::StackDiff& stacks, std::size_t at) {
  const compare::StackDiffNode& node = stacks.nodes[at];
  w.begin_object()
      .field("name", node.name)
      .field("kind", compare::stack_frame_kind_name(node.kind))
      .field("value", node.changed_ns)
      .field("base", node.base_ns)
      .field("delta", node.delta_ns())
      .array("children");
  for (std::size_t child : node.children) flame_node(w, stacks, child);
  w.end_array().end_object();
}

void flame(JsonWriter& w, const compare::StackDiff& stacks) {
  const auto total = [&](std::string_view name, const compare::Spread& spread) {
    w.object(name)
        .field("median", spread.median)
        .field("min", spread.min)
        .field("max", spread.max)
        .field("text", words::spread(compare::Metric::kWaitNs, spread))
        .end_object();
  };
  w.object("flame").field("stacks", stacks.stacks.size());
  total("base_total", stacks.base_total);
  total("new_total", stacks.changed_total);
  w.key("tree");
  if (stacks.nodes.empty())
    w.value(nullptr);
  else
    flame_node(w, stacks, 0);
  w.end_object();
}

}  // namespace

void write_diff_html(const Comparison& diff, const compare::StackDiff& stacks,
                     const DiffOptions& options, std::ostream& out) {
  write_html_page(out, "diff.html", [&](JsonWriter& w) {
    w.begin_object()
        .field("base", options.base_label)
        .field("new", options.changed_label)
        .field("base_runs", diff.base_runs)
        .field("new_runs", diff.changed_runs)
        .field("failed", diff.tested && !diff.regressions.empty())
        .field("verdict", words::verdict(diff))
        .field("gate", words::gate_line(diff));
    findings(w, "findings_appeared", diff.findings_appeared);
    findings(w, "findings_gone", diff.findings_gone);
    changes(w, diff, options);
    one_side(w, "only_new", diff, diff.added);
    one_side(w, "only_base", diff, diff.gone);
    flame(w, stacks);
    w.end_object();
  });
}

}  // namespace lockscope
