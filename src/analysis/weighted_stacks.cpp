#include "analysis/weighted_stacks.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>

#include "analysis/lock_names.h"
#include "analysis/wait_attribution.h"

namespace lockscope {
namespace {

std::vector<CodeLocation> outermost_first(std::vector<CodeLocation> frames) {
  std::vector<CodeLocation> logical = logical_frames(frames);
  std::reverse(logical.begin(), logical.end());
  return logical;
}

bool counts_as_wait(format::Operation operation) {
  return counts_as_acquisition(operation) || operation == format::Operation::kCondReacquire;
}

void add_waits(const ProcessProfile& process, const LockSummary& lock, const SiteSummary& site,
               std::vector<WeightedStack>& out) {
  uint64_t captured_waits = 0, captured_ns = 0;
  for (const SiteStack& row : site.stacks) {
    if (row.stack >= process.stacks.size() || process.stacks[row.stack].empty()) continue;
    captured_waits += row.waits;
    captured_ns += row.wait_ns;
    if (row.wait_ns == 0) continue;
    out.push_back({&lock, site.operation, outermost_first(process.stacks[row.stack]), true,
                   row.waits, row.wait_ns});
  }
  // Never more than the site's own figures, whatever the stacks claim.
  const uint64_t rest_ns = site.wait_sum_ns - std::min(site.wait_sum_ns, captured_ns);
  const uint64_t rest_waits = site.contended - std::min(site.contended, captured_waits);
  if (rest_ns > 0)
    out.push_back(
        {&lock, site.operation, outermost_first({site.location}), false, rest_waits, rest_ns});
}

// A site's hold total: the holds whose release stack was captured on that stack (it starts at the
// release's call site: where the hold ended), the rest on the acquire site alone.
void add_holds(const ProcessProfile& process, const LockSummary& lock, const SiteSummary& site,
               std::vector<WeightedStack>& out) {
  uint64_t captured_holds = 0, captured_ns = 0;
  for (const HoldStack& row : site.hold_stacks) {
    if (row.stack >= process.stacks.size() || process.stacks[row.stack].empty()) continue;
    if (captured_ns + row.hold_ns > site.hold_sum_ns) break;  // never more than the site's own
    captured_holds += row.holds;
    captured_ns += row.hold_ns;
    if (row.hold_ns == 0) continue;
    out.push_back({&lock, site.operation, outermost_first(process.stacks[row.stack]), true,
                   row.holds, row.hold_ns});
  }
  const uint64_t rest_ns = site.hold_sum_ns - captured_ns;
  const uint64_t holds = site.acquisitions();
  if (rest_ns > 0)
    out.push_back({&lock, site.operation, outermost_first({site.location}), false,
                   holds - std::min(holds, captured_holds), rest_ns});
}

}  // namespace

std::string stack_weight_name(StackWeight weight) {
  return weight == StackWeight::kHold ? "hold" : "wait";
}

bool parse_stack_weight(const std::string& name, StackWeight& weight) {
  if (name == "wait")
    weight = StackWeight::kWait;
  else if (name == "hold")
    weight = StackWeight::kHold;
  else
    return false;
  return true;
}

std::vector<WeightedStack> weighted_stacks(const ProcessProfile& process, StackWeight weight) {
  std::vector<WeightedStack> out;
  for (const LockSummary& lock : process.locks) {
    if (!is_lock_wait_primitive(lock.primitive)) continue;
    for (const SiteSummary& site : lock.sites) {
      if (weight == StackWeight::kWait) {
        if (counts_as_wait(site.operation)) add_waits(process, lock, site, out);
      } else if (counts_as_acquisition(site.operation) && site.hold_sum_ns > 0) {
        add_holds(process, lock, site, out);
      }
    }
  }
  return out;
}

uint64_t lock_time_total(const ProcessProfile& process, StackWeight weight) {
  uint64_t total = 0;
  for (const LockSummary& lock : process.locks)
    if (is_lock_wait_primitive(lock.primitive))
      total += weight == StackWeight::kWait ? lock.wait_sum_ns : lock.hold_sum_ns;
  return total;
}

std::string lock_frame_name(const LockSummary& lock, format::Operation operation) {
  // Its name (lock_names.h); with its address too when other locks of the process share the name
  // (the stripes one loop made), so that each lock stays a frame of its own as before.
  std::string name = fmt::format("{} {}", lock_kind_name(lock), lock_name(lock));
  if (!lock.name.empty() && lock.name_source != LockNameSource::kAddress &&
      lock.same_name_locks > 1)
    name += fmt::format(" 0x{:x}", lock.address);
  if (lock.generation > 0) name += fmt::format("#{}", lock.generation);
  if (operation == format::Operation::kCondReacquire)
    name += " (after cond wait)";
  else if (lock.primitive == format::Primitive::kRwLock && format::is_read_side(operation))
    name += " (read)";
  else if (lock.primitive == format::Primitive::kRwLock && format::is_write_side(operation))
    name += " (write)";
  return name;
}

std::string process_frame_name(const ProcessProfile& process) {
  const std::string& program =
      process.arguments.empty() ? process.executable : process.arguments.front();
  const std::string command = std::filesystem::path(program).filename().string();
  return command.empty() ? fmt::format("pid {}", process.pid)
                         : fmt::format("pid {} ({})", process.pid, command);
}

}  // namespace lockscope
