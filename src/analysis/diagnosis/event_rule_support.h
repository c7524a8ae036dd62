// What the event rules (primitive_rules.cpp, wakeup_rules.cpp, deadlock_rules.cpp) share: how
// they word a share and a site, and how they pick a lock's sites. Small on purpose: each rule's
// figures stay in its own detector.
#pragma once

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/profile_model.h"

namespace lockscope::event_rules {

inline double share_of(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0 : double(part) / double(whole);
}

// A site as a person reads it: its symbolized label, else its offset.
inline std::string site_text(const CodeLocation& where) {
  if (!where.label.empty()) return where.label;
  if (!where.known()) return "(where is not known)";
  return fmt::format("{:#x}", where.offset);
}

inline bool same_place(const CodeLocation& a, const CodeLocation& b) {
  return a.known() && a.module == b.module && a.offset == b.offset;
}

// Appends `where` to `sites` unless it is unknown or there already.
inline void add_site(std::vector<CodeLocation>& sites, const CodeLocation& where) {
  if (!where.known()) return;
  for (const CodeLocation& site : sites)
    if (same_place(site, where)) return;
  sites.push_back(where);
}

// The sites of `lock` that pass `keep`, most `weight` first (ties: the profile's order), at most
// `limit` of them.
template <typename Keep, typename Weight>
std::vector<const SiteSummary*> heaviest_sites(const LockSummary& lock, Keep keep, Weight weight,
                                               size_t limit) {
  std::vector<const SiteSummary*> sites;
  for (const SiteSummary& site : lock.sites)
    if (keep(site)) sites.push_back(&site);
  std::stable_sort(sites.begin(), sites.end(), [&](const SiteSummary* a, const SiteSummary* b) {
    return weight(*a) > weight(*b);
  });
  if (sites.size() > limit) sites.resize(limit);
  return sites;
}

}  // namespace lockscope::event_rules
