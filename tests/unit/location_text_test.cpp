// The text report's location names: the function a location was inlined into, never itself; in
// a stack, every function.
#include "report/location_text.h"

#include <gtest/gtest.h>

namespace lockscope {
namespace {

CodeLocation at(std::string label, std::vector<std::string> inlined_from) {
  CodeLocation where;
  where.offset = 0x1234;
  where.label = std::move(label);
  where.inlined_from = std::move(inlined_from);
  return where;
}

TEST(LocationText, NamesTheFunctionItWasInlinedInto) {
  EXPECT_EQ(location_text(at("take w.c:12", {})), "take w.c:12");
  EXPECT_EQ(location_text(at("take w.c:12", {"worker w.c:40", "start w.c:50"})),
            "take w.c:12 (inlined into worker w.c:40)");
}

TEST(LocationText, NeverInlinedIntoItself) {
  // Recursion inlined once into itself, then into its caller.
  EXPECT_EQ(location_text(at("walk t.c:8", {"walk t.c:11", "main t.c:30"})),
            "walk t.c:8 (inlined into main t.c:30)");
  // Only frames of its own function (a partial-inlining clone): nothing to add.
  EXPECT_EQ(location_text(at("ns::Cache::get c.h:5", {"ns::Cache::get c.h:9"})),
            "ns::Cache::get c.h:5");
  // Template arguments hold spaces: the function is everything before the last one.
  EXPECT_EQ(location_text(at("f<int, long> a.h:2", {"f<int, long> a.h:7", "g b.c:1"})),
            "f<int, long> a.h:2 (inlined into g b.c:1)");
}

// A stack names every function, inlined ones included, innermost first.
TEST(LocationText, AStackFrameIsALineForEachFunctionInIt) {
  using Lines = std::vector<std::string>;
  EXPECT_EQ(stack_frame_lines(at("take w.c:12", {})), Lines{"take w.c:12"});
  EXPECT_EQ(stack_frame_lines(at("append j.c:64", {"run_child j.c:110", "main j.c:134"})),
            (Lines{"append j.c:64 (inlined)", "run_child j.c:110 (inlined)", "main j.c:134"}));
  EXPECT_EQ(stack_frame_lines(at("", {})), Lines{"0x1234"});
}

}  // namespace
}  // namespace lockscope
