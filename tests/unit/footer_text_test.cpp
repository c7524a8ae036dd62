// The report's footer notes (report/footer_text.cpp).
#include "report/footer_text.h"

#include <gtest/gtest.h>

#include <sstream>

#include "one_mutex_profile.h"

namespace lockscope {
namespace {

// A server's thousands of locks taken at a few call sites of a module without debug info: the
// note counts the call sites (code addresses), not the (lock, site) rows (memcached's 4,000 item
// locks once made it "45472 call sites").
TEST(FooterText, CallSitesWithoutLinesAreCountedOncePerAddress) {
  CodeLocation site;
  site.module = 0;
  site.offset = 0x1234;
  CodeLocation other = site;
  other.offset = 0x1240;
  Profile profile = one_mutex_profile(site, other);
  ProcessProfile& process = profile.processes[0];
  process.modules = {ModuleSummary{"/usr/bin/server", "ab12", 0, 0x1000, 0x9000}};
  const LockSummary first = process.locks[0];
  for (uint64_t i = 1; i < 1000; ++i) {
    LockSummary lock = first;
    lock.address = 0xfeed + i * 64;
    if (i % 2) lock.sites[0].location = other;
    process.locks.push_back(lock);
  }
  std::ostringstream out;
  write_footer(profile, out);
  EXPECT_NE(out.str().find("2 call sites in /usr/bin/server without file:line"), std::string::npos)
      << out.str();
}

}  // namespace
}  // namespace lockscope
