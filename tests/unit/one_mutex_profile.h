// The hand-built profile the writer tests share: one process, pid 7 ("./cache"), whose mutex
// 0xfeed was taken 4 times at `site`, 3 of them contended for 900 ns in all; one of those waits
// (600 ns) on the captured stack site <- `caller`, the rest on the call site alone; 50 ns held.
#pragma once

#include "analysis/profile_model.h"

namespace lockscope {

inline Profile one_mutex_profile(const CodeLocation& site_location, const CodeLocation& caller) {
  Profile profile;
  profile.directory = "prof";
  ProcessProfile process;
  process.pid = 7;
  process.arguments = {"./cache"};
  process.stacks = {{site_location, caller}};
  LockSummary lock;
  lock.address = 0xfeed;
  SiteSummary site;
  site.location = site_location;
  site.count = 4;
  site.contended = 3;
  site.wait_sum_ns = 900;
  site.hold_sum_ns = 50;
  site.stacks = {SiteStack{0, 1, 600}};
  lock.sites = {site};
  lock.finish();
  process.locks = {lock};
  profile.processes = {process};
  return profile;
}

}  // namespace lockscope
