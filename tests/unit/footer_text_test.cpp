// The report's footer notes (report/footer_text.cpp).
#include "report/footer_text.h"

#include <gtest/gtest.h>

#include <sstream>

#include "one_mutex_profile.h"

namespace lockscope {
namespace {

// one_mutex_profile's mutex, its site at 0x1234 (called from 0x1240), both without lines, in
// `module` (build-id ab12).
Profile one_mutex_profile_in(const std::string& module) {
  CodeLocation site;
  site.module = 0;
  site.offset = 0x1234;
  CodeLocation other = site;
  other.offset = 0x1240;
  Profile profile = one_mutex_profile(site, other);
  profile.processes[0].modules = {ModuleSummary{module, "ab12", 0, 0x1000, 0x9000}};
  return profile;
}

// A server's thousands of locks taken at a few call sites of a module without debug info: the
// note counts the call sites (code addresses), not the (lock, site) rows (memcached's 4,000 item
// locks once made it "45472 call sites").
TEST(FooterText, CallSitesWithoutLinesAreCountedOncePerAddress) {
  Profile profile = one_mutex_profile_in("/usr/bin/server");
  ProcessProfile& process = profile.processes[0];
  CodeLocation other = process.locks[0].sites[0].location;
  other.offset = 0x1240;
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

// One file under two names (git runs as /usr/bin/git and, hard-linked, /usr/lib/git-core/git, in
// two processes): one note, naming both (before, one note per name, each the same hint).
TEST(FooterText, AFileRunUnderTwoNamesGetsOneNote) {
  Profile profile = one_mutex_profile_in("/usr/bin/git");
  profile.processes.push_back(profile.processes[0]);
  profile.processes[1].pid += 1;
  profile.processes[1].modules = {
      ModuleSummary{"/usr/lib/git-core/git", "ab12", 0, 0x1000, 0x9000}};
  std::ostringstream out;
  write_footer(profile, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("1 call site in /usr/bin/git (also as /usr/lib/git-core/git) without "
                      "file:line"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("without file:line"), text.rfind("without file:line")) << text;
}

}  // namespace
}  // namespace lockscope
