#include "report/hold_stacks_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analysis/duration_format.h"
#include "report/location_text.h"
#include "report/text_table.h"

namespace lockscope {

void write_hold_stacks(const ProcessProfile& process, const std::vector<const SiteSummary*>& sites,
                       size_t top, StackIds& stacks, std::ostream& out) {
  // Two sites' holds can end at one release stack: summed by stack.
  std::map<size_t, HoldStack> by_stack;
  uint64_t holds = 0, total_ns = 0, acquisitions = 0;
  for (const SiteSummary* site : sites) {
    acquisitions += site->acquisitions();
    for (const HoldStack& row : site->hold_stacks) {
      if (row.stack >= process.stacks.size()) continue;
      HoldStack& sum = by_stack[row.stack];
      sum.stack = row.stack;
      sum.holds += row.holds;
      sum.hold_ns += row.hold_ns;
      holds += row.holds;
      total_ns += row.hold_ns;
    }
  }
  if (by_stack.empty() || total_ns == 0) return;
  std::vector<const HoldStack*> rows;
  for (const auto& [stack, sum] : by_stack) rows.push_back(&sum);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const HoldStack* a, const HoldStack* b) { return a->hold_ns > b->hold_ns; });
  write_wrapped_line(
      out, fmt::format("  stacks the holds were released from ({} of {} holds, {}; sampled holds "
                       "count for those they sample):",
                       format_count(holds), format_count(acquisitions),
                       format_duration_ns(double(total_ns))));
  for (size_t r = 0; r < rows.size() && r < top; ++r) {
    const std::string lead = fmt::format(
        "    {:>6.1f} %  {} in {} hold{}", 100.0 * double(rows[r]->hold_ns) / double(total_ns),
        format_duration_ns(double(rows[r]->hold_ns)), format_count(rows[r]->holds),
        rows[r]->holds == 1 ? "" : "s");
    stacks.write(lead, process.stacks[rows[r]->stack], "      ", out);
  }
  if (rows.size() > top)
    out << fmt::format("    ... {} more stack{}\n", rows.size() - top,
                       rows.size() - top == 1 ? "" : "s");
}

}  // namespace lockscope
