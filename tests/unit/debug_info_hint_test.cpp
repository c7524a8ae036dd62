// The footer's hint for a module without debug info names the way to it exactly: the build-id,
// Debian's debuginfod URL (or that DEBUGINFOD_URLS is set and gave nothing), the -dbgsym package.
#include "analysis/debug_info_hint.h"

#include <gtest/gtest.h>

namespace lockscope {
namespace {

std::optional<std::string> owned_by_git(const std::string& path) {
  if (path == "/usr/bin/git") return std::string("git");
  return std::nullopt;
}

TEST(DebugInfoHint, NamesTheBuildIdDebiansServerAndTheDbgsymPackage) {
  const std::string hint = debug_info_hint({"/usr/bin/git", "a91136fa", ""}, owned_by_git);
  EXPECT_NE(hint.find("build-id a91136fa"), std::string::npos) << hint;
  EXPECT_NE(hint.find("DEBUGINFOD_URLS=https://debuginfod.debian.net"), std::string::npos) << hint;
  EXPECT_NE(hint.find("install git-dbgsym"), std::string::npos) << hint;
  EXPECT_NE(hint.find("deb http://deb.debian.org/debian-debug/"), std::string::npos) << hint;
}

TEST(DebugInfoHint, SaysWhenDebuginfodWasAskedAndGaveNothing) {
  const std::string hint =
      debug_info_hint({"/opt/app/server", "beef", "http://127.0.0.1:1"}, owned_by_git);
  EXPECT_NE(hint.find("DEBUGINFOD_URLS is set, to http://127.0.0.1:1"), std::string::npos) << hint;
  EXPECT_EQ(hint.find("dbgsym"), std::string::npos) << "no Debian package owns it: " << hint;
  EXPECT_NE(hint.find("a debuginfod server of your own builds"), std::string::npos) << hint;
}

TEST(DebugInfoHint, SaysWhenThereIsNoBuildId) {
  const std::string hint = debug_info_hint({"/opt/app/server", "", ""}, owned_by_git);
  EXPECT_NE(hint.find("no build-id"), std::string::npos) << hint;
  EXPECT_EQ(hint.find("DEBUGINFOD_URLS="), std::string::npos) << hint;
}

// A module with debug info, some of whose call sites have no line (code without -g linked in):
// no advice to fetch debug info it already has.
TEST(DebugInfoHint, AModuleWithLinesElsewhereIsNotSaidToLackDebugInfo) {
  const std::string hint = debug_info_hint({"/usr/bin/git", "a91136fa", "", 120}, owned_by_git);
  EXPECT_EQ(hint.find("no debug info found"), std::string::npos) << hint;
  EXPECT_NE(hint.find("120 other call sites of this module have file:line"), std::string::npos)
      << hint;
  EXPECT_EQ(hint.find("dbgsym"), std::string::npos) << hint;
}

// Outside the directories packages install code into, dpkg is not asked at all.
TEST(DebugInfoHint, AProgramOfOnesOwnBuildIsNobodysPackage) {
  EXPECT_EQ(debian_package_owning("/home/dev/build/server"), std::nullopt);
  EXPECT_EQ(debian_package_owning("/tmp/a.out"), std::nullopt);
}

TEST(DebugInfoHint, FindsTheDebianPackageOfARealFile) {
  // dpkg-query is on every Debian machine; ls is coreutils', under either name of merged /usr.
  if (!debian_package_owning("/bin/ls")) GTEST_SKIP() << "dpkg-query does not know /bin/ls";
  EXPECT_EQ(debian_package_owning("/bin/ls"), "coreutils");
  EXPECT_EQ(debian_package_owning("/usr/bin/ls"), "coreutils");
  // A diverted file: dpkg-query lists the diversion first, then the package.
  if (std::optional<std::string> sh = debian_package_owning("/bin/sh")) {
    EXPECT_EQ(*sh, "dash");
  }
  EXPECT_EQ(debian_package_owning("/nonexistent/lockscope-test-file"), std::nullopt);
  EXPECT_EQ(debian_package_owning("relative/path"), std::nullopt);
}

}  // namespace
}  // namespace lockscope
