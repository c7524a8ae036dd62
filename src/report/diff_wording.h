// The words and numbers the text and markdown diffs share: a figure in its unit, a change with its
// interval, the verdict sentence, and which rows a diff lists.
#pragma once

#include <string>
#include <vector>

#include "analysis/compare/run_comparison.h"

namespace lockscope::diff_wording {

// "−31.2 %", "+4.0 %", "0 %": a fraction (−0.312) as a signed percentage.
std::string percent(double fraction);
// "p=0.002", "p=0.0004", "p<0.0001".
std::string p_value(double p);
// "×0.69 [0.62–0.76]": a ratio's estimate and interval.
std::string ratio(const compare::RatioEstimate& estimate);

// "12.3ms", "1,204": a metric's value in its unit; "–" for no value.
std::string figure(compare::Metric metric, double value);
// "12.3ms [11.9ms–13.0ms]" (one run: no range).
std::string spread(compare::Metric metric, const compare::Spread& spread);
// `text` as a markdown table cell: '|' would end it, a newline the row.
std::string markdown_cell(const std::string& text);
// "−31.2 %", "+4.0 %", "new" (from 0), "0 %".
std::string change(const compare::MetricChange& change);
// "×0.69 [0.62–0.76]": the ratio's estimate and interval; "" without one.
std::string ratio(const compare::MetricChange& change);
// "p=0.002", "~ (p=0.43)", "n too small", "no value".
std::string significance(const compare::MetricChange& change);
// Whether the runs have one process (matched or not): its row is then the program's, and names
// leave it out.
bool one_process(const compare::Comparison& diff);
// The entity as a reader names it: "program", "git", "git: cache_lock",
// "git: cache_lock at lock find_pack pack.c:120" ("cache_lock" when one_process).
std::string entity_name(const compare::Comparison& diff, const compare::EntityRuns& entity);

// One sentence about the program's lock waits: "Lock waits 31.2 % lower in NEW, significant
// (p=0.0002, 10+10 runs)", "Lock waits: no significant change (p=0.43, 10+10 runs)", "... not
// tested: 3+3 runs, a test needs 5 a side".
std::string verdict(const compare::Comparison& diff);
// "passed (wait:+10%:1ms)", "FAILED: 2 regressions (wait:+10%:1ms)", "not judged: ...".
std::string gate_line(const compare::Comparison& diff);

// A matched figure worth a row.
struct Row {
  const compare::EntityChange* entity = nullptr;
  compare::Metric metric = compare::Metric::kWaitNs;
  bool regression = false;
};
// The rows a diff lists: every significant change (regressions first, then by how far the ratio
// is from 1), then, unless `all`, the wait of the `top` entities with the most wait on either side
// that are not listed yet; with `all`, every figure of every matched entity.
std::vector<Row> listed_rows(const compare::Comparison& diff, std::size_t top, bool all);

}  // namespace lockscope::diff_wording
