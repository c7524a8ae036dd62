#include "report/blame_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "analysis/duration_format.h"
#include "report/location_text.h"
#include "report/text_table.h"

namespace lockscope {
namespace {

std::string holder_label(const CodeLocation& holder) {
  if (!holder.known()) return kUnknownHolderLabel;
  return location_text(holder);
}

std::string wait_line(uint64_t wait_ns, uint64_t of_ns, uint64_t waits, const std::string& label) {
  return fmt::format("    {:>6.1f} %  {} in {} wait{}  {}", 100.0 * double(wait_ns) / double(of_ns),
                     format_duration_ns(double(wait_ns)), format_count(waits),
                     waits == 1 ? "" : "s", label);
}

}  // namespace

void write_blame(const std::vector<const SiteSummary*>& sites, std::ostream& out) {
  using HolderKey = std::pair<uint32_t, uint64_t>;  // the holder's site: module, offset
  std::map<HolderKey, std::pair<const CodeLocation*, Blame>> by_holder;
  uint64_t total_ns = 0;
  size_t waiting_sites = 0;
  for (const SiteSummary* site : sites) {
    if (site->blame.empty() || site->wait_sum_ns == 0) continue;
    ++waiting_sites;
    // A site's rows are per (holder site, holder stack, waiter stack): summed here by holder site,
    // in the order first seen.
    std::vector<std::pair<const CodeLocation*, Blame>> holders;
    std::map<HolderKey, size_t> position;
    for (const Blame& row : site->blame) {
      const HolderKey key{row.holder_site.module, row.holder_site.offset};
      auto& [holder, sum] = by_holder[key];
      holder = &row.holder_site;
      sum.waits += row.waits;
      sum.wait_ns += row.wait_ns;
      total_ns += row.wait_ns;
      const auto [at, added] = position.try_emplace(key, holders.size());
      if (added) holders.push_back({&row.holder_site, Blame{}});
      holders[at->second].second.waits += row.waits;
      holders[at->second].second.wait_ns += row.wait_ns;
    }
    // Every wait behind a hold from the same line says nothing the site's row does not.
    const CodeLocation& only = *holders.front().first;
    if (holders.size() == 1 && only.module == site->location.module &&
        only.offset == site->location.offset)
      continue;
    std::stable_sort(holders.begin(), holders.end(), [](const auto& a, const auto& b) {
      return a.second.wait_ns > b.second.wait_ns;
    });
    // A mutex's re-takes after condition waits are a site of their own at the wait's line, which
    // may be the line of a lock call too: named, so that one block is not read for the other.
    const bool acquire =
        format::operation_class(site->operation) == format::OperationClass::kAcquire;
    write_wrapped_line(
        out, fmt::format("  waits at {}{} were behind holds taken at:", site->location.label,
                         acquire ? "" : " (" + operation_name(site->operation) + ")"));
    for (const auto& [holder, sum] : holders)
      write_wrapped_line(
          out, wait_line(sum.wait_ns, site->wait_sum_ns, sum.waits, holder_label(*holder)));
  }
  if (waiting_sites < 2 || total_ns == 0) return;
  std::vector<const std::pair<const CodeLocation*, Blame>*> holders;
  for (const auto& [key, entry] : by_holder) holders.push_back(&entry);
  std::stable_sort(holders.begin(), holders.end(), [](const auto* a, const auto* b) {
    return a->second.wait_ns > b->second.wait_ns;
  });
  out << "  holds that made the others wait, by where they were taken:\n";
  for (const auto* entry : holders)
    write_wrapped_line(out, wait_line(entry->second.wait_ns, total_ns, entry->second.waits,
                                      holder_label(*entry->first)));
}

// The calls of an acquire site that waited: its contended ones, and for a timed or clock lock
// its timed-out ones too (failed, not contended, but a wait whose stack is captured as any
// other's): its wait histogram's, which holds every wait and no call that failed at once.
uint64_t waits_of(const SiteSummary& site) {
  switch (site.operation) {
    case format::Operation::kTimedLock:
    case format::Operation::kClockLock:
    case format::Operation::kTimedReadLock:
    case format::Operation::kClockReadLock:
    case format::Operation::kTimedWriteLock:
    case format::Operation::kClockWriteLock:
      return std::max(site.contended, site.wait.total());
    default:
      return site.contended;
  }
}

void write_wait_stacks(const ProcessProfile& process, const std::vector<const SiteSummary*>& sites,
                       size_t top, StackIds& stacks, std::ostream& out) {
  std::vector<const SiteStack*> rows;
  uint64_t captured = 0, waits = 0;
  const SiteSummary* only_site = nullptr;
  size_t waiting_sites = 0;
  for (const SiteSummary* site : sites) {
    if (format::operation_class(site->operation) != format::OperationClass::kAcquire ||
        (waits_of(*site) == 0 && site->stacks.empty()))
      continue;
    ++waiting_sites;
    only_site = site;
    waits += waits_of(*site);
    for (const SiteStack& row : site->stacks) {
      rows.push_back(&row);
      captured += row.waits;
    }
  }
  if (rows.empty()) return;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const SiteStack* a, const SiteStack* b) { return a->wait_ns > b->wait_ns; });
  const std::string where =
      waiting_sites == 1 ? "at " + only_site->location.label
                         : fmt::format("on this lock, across its {} call sites", waiting_sites);
  write_wrapped_line(out, fmt::format("  stacks of the waits {} ({} of {} waits captured):", where,
                                      format_count(captured), format_count(waits)));
  for (size_t r = 0; r < rows.size() && r < top; ++r) {
    const std::string lead =
        fmt::format("    {} in {} wait{}", format_duration_ns(double(rows[r]->wait_ns)),
                    format_count(rows[r]->waits), rows[r]->waits == 1 ? "" : "s");
    if (rows[r]->stack >= process.stacks.size()) {
      out << lead << '\n';
      continue;
    }
    stacks.write(lead, process.stacks[rows[r]->stack], "      ", out);
  }
  if (rows.size() > top)
    out << fmt::format("    ... {} more stack{}\n", rows.size() - top,
                       rows.size() - top == 1 ? "" : "s");
}

void write_holder_stacks(const ProcessProfile& process,
                         const std::vector<const SiteSummary*>& sites, size_t top, StackIds& stacks,
                         std::ostream& out) {
  struct HolderStack {
    const CodeLocation* acquired_at = nullptr;
    bool at_acquire = false;
    uint64_t waits = 0;
    uint64_t wait_ns = 0;
  };
  // By (holder stack, holder site): one stack at release may end holds taken at two sites.
  std::map<std::tuple<size_t, bool, uint32_t, uint64_t>, HolderStack> by_stack;
  uint64_t blamed = 0, known = 0;
  for (const SiteSummary* site : sites)
    for (const Blame& row : site->blame) {
      blamed += row.waits;
      if (row.holder_stack == Blame::kNoStack || row.holder_stack >= process.stacks.size())
        continue;
      known += row.waits;
      HolderStack& sum = by_stack[{row.holder_stack, row.holder_stack_at_acquire,
                                   row.holder_site.module, row.holder_site.offset}];
      sum.acquired_at = &row.holder_site;
      sum.at_acquire = row.holder_stack_at_acquire;
      sum.waits += row.waits;
      sum.wait_ns += row.wait_ns;
    }
  if (by_stack.empty()) return;
  std::vector<std::pair<size_t, const HolderStack*>> rows;
  for (const auto& [key, sum] : by_stack) rows.emplace_back(std::get<0>(key), &sum);
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.second->wait_ns > b.second->wait_ns;
  });
  out << fmt::format("  stacks of the holds they waited behind ({} of {} waits known):\n",
                     format_count(known), format_count(blamed));
  for (size_t r = 0; r < rows.size() && r < top; ++r) {
    const HolderStack& sum = *rows[r].second;
    const std::string lead =
        fmt::format("    {} in {} wait{}, behind holds taken at {} ({})",
                    format_duration_ns(double(sum.wait_ns)), format_count(sum.waits),
                    sum.waits == 1 ? "" : "s", holder_label(*sum.acquired_at),
                    sum.at_acquire ? "stack of its acquisition" : "stack at its release");
    stacks.write(lead, process.stacks[rows[r].first], "      ", out);
  }
  if (rows.size() > top)
    out << fmt::format("    ... {} more stack{}\n", rows.size() - top,
                       rows.size() - top == 1 ? "" : "s");
}

void write_wait_attribution(const WaitAttribution& attribution, const WaitAttributionRule& rule,
                            std::ostream& out) {
  const uint64_t contended = attribution.contended();
  if (contended == 0) return;
  uint64_t total_ns = attribution.without_stack_wait_ns;
  for (const AttributedWaits& row : attribution.frames) total_ns += row.wait_ns;
  std::string how = fmt::format("--caller-depth {}", rule.caller_depth);
  if (!rule.skip_frames.empty()) how += fmt::format(" --skip-frames '{}'", rule.skip_frames);
  out << fmt::format("  contended waits by caller outside the wrappers ({}):\n", how);
  for (const AttributedWaits& row : attribution.frames)
    write_wrapped_line(out, wait_line(row.wait_ns, std::max<uint64_t>(total_ns, 1), row.waits,
                                      holder_label(row.frame)));
  out << fmt::format(
      "    {} of {} contended waits had no captured stack and stay at their call "
      "site{}\n",
      format_count(attribution.without_stack_waits), format_count(contended),
      attribution.without_stack_waits
          ? fmt::format(" ({})", format_duration_ns(double(attribution.without_stack_wait_ns)))
          : "");
}

}  // namespace lockscope
