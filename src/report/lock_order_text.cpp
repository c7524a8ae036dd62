#include "report/lock_order_text.h"

#include <fmt/format.h>

#include "report/location_text.h"
#include "report/lock_rows.h"

namespace lockscope {
namespace {

std::string lock_text(const ProfileViews& views, bool addresses, const ProcessProfile& process,
                      size_t lock) {
  const LockSummary& summary = process.locks[lock];
  if (addresses)
    return lock_identity(LockRow{&process, &summary, nullptr, ""}) + " " +
           primitive_name(summary.primitive);
  return primitive_name(summary.primitive) + " " + lock_label(views, process, summary, "");
}

std::string where(const CodeLocation& location) {
  if (!location.known()) return "(where it was taken is not known)";
  if (location.label.empty()) return fmt::format("0x{:x}", location.offset);
  return location_text(location);
}

}  // namespace

void write_lock_order_inversions(const ProfileViews& views, bool addresses, std::ostream& out) {
  size_t edges = 0, found = 0;
  for (const ProcessProfile& process : views.profile().processes)
    edges += process.lock_order.size();
  if (edges == 0) return;
  out << "*** lock-order inversions (potential deadlocks) ***\n";
  for (const ProcessView& view : views.processes()) {
    const ProcessProfile& process = *view.process;
    for (const LockOrderInversion& inversion : view.inversions) {
      ++found;
      out << fmt::format("inversion {}: pid {}, {} locks taken in conflicting orders\n", found,
                         process.pid, inversion.edges.size());
      for (size_t e : inversion.edges) {
        const LockOrderEdge& edge = process.lock_order[e];
        out << fmt::format("  thread {} held {}\n", edge.tid,
                           lock_text(views, addresses, process, edge.from_lock));
        out << fmt::format("      taken at {}\n", where(edge.from_site));
        out << fmt::format("    and then took {} ({})\n",
                           lock_text(views, addresses, process, edge.to_lock),
                           operation_name(edge.to_operation));
        out << fmt::format("      at {}\n", where(edge.to_site));
        // The stack it was taken from (its first frame is the line above).
        if (edge.stack != LockOrderEdge::kNoStack)
          for (size_t i = 1; i < process.stacks[edge.stack].size(); ++i)
            for (const std::string& line : stack_frame_lines(process.stacks[edge.stack][i]))
              out << fmt::format("         from {}\n", line);
      }
    }
  }
  if (found == 0)
    out << fmt::format(
        "none: {} lock-order edge{} (a lock taken while holding another), no cycle\n", edges,
        edges == 1 ? "" : "s");
  out << '\n';
}

}  // namespace lockscope
