// The text report's fitting (report/text_table.h): names and code locations give way where they
// lose least, prose keeps its URLs, and a table told a width keeps to it.
#include "report/text_table.h"

#include <gtest/gtest.h>

#include <sstream>

namespace lockscope {
namespace {

TEST(TextFit, PathsLoseTheirDirectoriesBeforeTheNameItsMiddle) {
  const std::string site = "serve_requests /work/tree/demo/kvcache_demo.cpp:83 (pid 4)";
  EXPECT_EQ(cut_middle(site, 100), site);
  EXPECT_EQ(cut_middle(site, 50), "serve_requests …/demo/kvcache_demo.cpp:83 (pid 4)");
  EXPECT_EQ(cut_middle(site, 45), "serve_requests …/kvcache_demo.cpp:83 (pid 4)");
  // Past the file's own name: the middle goes, the end (file:line, pid) stays, one "…" only.
  const std::string cut = cut_middle(site, 30);
  EXPECT_EQ(display_width(cut), 30u) << cut;
  EXPECT_TRUE(cut.ends_with(".cpp:83 (pid 4)")) << cut;
  EXPECT_EQ(cut.find("……"), std::string::npos) << cut;
  EXPECT_EQ(cut_end("git pack-objects --no-reuse-delta", 12), "git pack-ob…");
  // A URL is never shortened: it would lead nowhere.
  const std::string hint = "report again with DEBUGINFOD_URLS=https://debuginfod.debian.net now";
  EXPECT_EQ(shorten_paths(hint, 20), hint);
}

TEST(TextFit, WrapBreaksAtSpacesAndKeepsTheColumnsGap) {
  EXPECT_EQ(wrap_text("aaa bbb  ccc", 7), (std::vector<std::string>{"aaa bbb", "ccc"}));
  EXPECT_EQ(wrap_text("aa  bb", 10), (std::vector<std::string>{"aa  bb"}));
  EXPECT_EQ(wrap_text("x /a/b/c/d/file.c:1", 12), (std::vector<std::string>{"x", "…/d/file.c:1"}));
  EXPECT_EQ(wrap_text("x /a/b/c/d/file.c:1", 12, /*cut_words=*/false),
            (std::vector<std::string>{"x", "/a/b/c/d/file.c:1"}));
}

TEST(TextFit, ATableKeepsToItsWidthByItsTextColumn) {
  TextTable table;
  table.set_header({"NAME", "COUNT"}, {true, false});
  table.add_row({"serve_requests /work/tree/demo/kvcache_demo.cpp:83", "800,000"});
  table.add_row({"short", "1"});
  table.fit_within(45, 0, CellFit::kCutMiddle, 10);
  std::ostringstream cut;
  table.write(cut);
  EXPECT_EQ(cut.str(),
            "NAME                                    COUNT\n"
            "serve_requests …/kvcache_demo.cpp:83  800,000\n"
            "short                                       1\n");
  // Without a width, as it is.
  TextTable whole;
  whole.set_header({"NAME"}, {true});
  whole.add_row({"serve_requests /work/tree/demo/kvcache_demo.cpp:83"});
  std::ostringstream out;
  whole.write(out);
  EXPECT_EQ(out.str(), "NAME\nserve_requests /work/tree/demo/kvcache_demo.cpp:83\n");
}

}  // namespace
}  // namespace lockscope
