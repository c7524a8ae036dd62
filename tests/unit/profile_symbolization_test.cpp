// symbolize_profile on addresses of this test binary (built -g): a call site in our own code
// names its file:line; one whose every frame is in a system header (a header-only library's lock,
// all inlined) still has the innermost file:line, as its label shows, and is not counted as a site
// without debug info.
#include "analysis/profile_symbolization.h"

#include <gtest/gtest.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <string>

namespace lockscope {
namespace {

// The lines a lookup inside own_function's first bytes may give: its own line (the prologue, as
// at -O0, or an endbr64) or its one statement's (its first instruction at -O2).
constexpr int kOwnFunctionLine = __LINE__ + 1;
__attribute__((noinline)) int own_function(int x) {
  return x * 3 + 1;  // kOwnFunctionLine + 1
}

// The ELF vaddr of `address` in the main program (PIE: minus its load bias).
uint64_t vaddr_in_main_program(const void* address) {
  uint64_t bias = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        *static_cast<uint64_t*>(out) = info->dlpi_addr;
        return 1;  // the first object is the main program
      },
      &bias);
  return reinterpret_cast<uint64_t>(address) - bias;
}

CodeLocation symbolized(const void* function) {
  char path[PATH_MAX] = {};
  EXPECT_GT(readlink("/proc/self/exe", path, sizeof(path) - 1), 0);
  Profile profile;
  ProcessProfile process;
  process.modules.push_back(ModuleSummary{path, "", 0, 0, 0});
  LockSummary lock;
  SiteSummary site;
  site.location.module = 0;
  // A return address: symbolization looks up the byte before it, inside the function.
  site.location.offset = vaddr_in_main_program(function) + 2;
  site.count = 1;
  lock.sites = {site};
  process.locks.push_back(lock);
  profile.processes.push_back(process);
  symbolize_profile(profile);
  return profile.processes[0].locks[0].sites[0].location;
}

TEST(ProfileSymbolization, OwnCodeNamesItsFileAndLine) {
  const CodeLocation where = symbolized(reinterpret_cast<const void*>(&own_function));
  EXPECT_TRUE(where.file.ends_with("profile_symbolization_test.cpp")) << where.label;
  EXPECT_TRUE(where.line == kOwnFunctionLine || where.line == kOwnFunctionLine + 1)
      << where.label << ", own_function is at line " << kOwnFunctionLine;
}

TEST(ProfileSymbolization, CodeOnlyOfSystemHeadersKeepsItsInnermostFileAndLine) {
  const int& (*max_of_ints)(const int&, const int&) = &std::max<int>;
  const CodeLocation where = symbolized(reinterpret_cast<const void*>(max_of_ints));
  EXPECT_NE(where.file.find("/include/c++/"), std::string::npos) << where.label;
  EXPECT_GT(where.line, 0) << "a site with debug info, counted as one without: " << where.label;
  EXPECT_NE(where.label.find("stl_algobase.h:" + std::to_string(where.line)), std::string::npos)
      << where.label;
}

}  // namespace
}  // namespace lockscope
