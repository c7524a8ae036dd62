// symbolize_profile reports its progress over every code location it fills: the call sites, init
// sites and stack frames of every process, every 256 and once at the end.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "analysis/profile_symbolization.h"

namespace lockscope {
namespace {

TEST(SymbolizeProgress, CountsEveryLocationEvery256AndEndsAtTheTotal) {
  Profile profile;
  ProcessProfile process;
  process.pid = 9;
  for (uint64_t i = 0; i < 1000; ++i) {
    LockSummary lock;
    lock.address = 0x1000 + i * 64;
    lock.init_site.offset = 0x400000 + i;  // no module: an absolute address, still a location
    SiteSummary site;
    site.location.offset = 0x500000 + i;
    site.count = 1;
    lock.sites = {site};
    lock.finish();
    process.locks.push_back(lock);
  }
  CodeLocation frame;
  frame.offset = 0x600000;
  CodeLocation caller;
  caller.offset = 0x600010;
  process.stacks = {{frame, caller}};
  profile.processes = {process, process};
  const size_t expected_total = 2 * (1000 * 2 + 2);

  std::vector<std::pair<size_t, size_t>> calls;
  symbolize_profile(profile, [&](size_t done, size_t total) { calls.emplace_back(done, total); });
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls.back(), std::make_pair(expected_total, expected_total));
  EXPECT_EQ(calls.size(), expected_total / 256 + 1);
  for (size_t i = 0; i + 1 < calls.size(); ++i) {
    EXPECT_EQ(calls[i].first, (i + 1) * 256);
    EXPECT_EQ(calls[i].second, expected_total);
  }
  for (const ProcessProfile& symbolized : profile.processes)
    for (const LockSummary& lock : symbolized.locks)
      EXPECT_FALSE(lock.sites.front().location.label.empty()) << "every location was filled";
}

}  // namespace
}  // namespace lockscope
