// The wait-attribution view over a hand-built process: waits through wrappers attributed past
// --caller-depth frames and --skip-frames matches, inlined wrappers expanded, waits without a
// stack kept at their call site, and every contended wait counted once.
#include "analysis/wait_attribution.h"

#include <gtest/gtest.h>

#include "analysis/profile_symbolization.h"

namespace lockscope {
namespace {

CodeLocation frame(const std::string& function, int line) {
  CodeLocation where;
  where.module = 0;
  where.offset = 0x1000 + static_cast<uint64_t>(line);
  where.function = function;
  where.file = "app.cc";
  where.line = line;
  where.label = short_function_name(function) + " app.cc:" + std::to_string(line);
  return where;
}

WaitAttributionRule rule(size_t depth, const std::string& pattern) {
  std::string error;
  std::optional<WaitAttributionRule> made = make_wait_attribution_rule(depth, pattern, error);
  EXPECT_TRUE(made) << error;
  return made ? *made : WaitAttributionRule{};
}

// One mutex taken at one line inside MutexLock::MutexLock, from two callers; a third caller's
// MutexLock was inlined into it. 10 + 4 + 3 waits have stacks, 2 more do not.
struct WrappedProcess {
  ProcessProfile process;
  LockSummary lock;
  WrappedProcess() {
    const CodeLocation site = frame("MutexLock::MutexLock(Mutex*)", 10);
    CodeLocation inlined = frame("MutexLock::MutexLock(Mutex*)", 10);
    inlined.offset = 0x3000;
    inlined.inlined_from = {"Cache::put app.cc:70", "Server::serve app.cc:90"};
    process.stacks = {
        {site, frame("Cache::get(int) const", 40), frame("Server::serve()", 80)},
        {site, frame("Cache::evict()", 50), frame("Server::serve()", 81)},
        {inlined, frame("main", 100)},
    };
    SiteSummary lock_site;
    lock_site.location = site;
    lock_site.count = 100;
    lock_site.contended = 12;
    lock_site.wait_sum_ns = 12'000;
    lock_site.stacks = {SiteStack{0, 6, 6'000}, SiteStack{1, 4, 4'000}};
    SiteSummary other_site;  // the inlined MutexLock: another return address
    other_site.location = inlined;
    other_site.count = 20;
    other_site.contended = 7;
    other_site.wait_sum_ns = 9'000;
    other_site.stacks = {SiteStack{2, 3, 6'000}};
    SiteSummary unlock_site;
    unlock_site.operation = format::Operation::kUnlock;
    unlock_site.location = frame("MutexLock::~MutexLock()", 11);
    unlock_site.count = 120;
    lock.sites = {lock_site, other_site, unlock_site};
    lock.finish();
  }
};

TEST(WaitAttribution, SkipFramesNamesTheCallersAndEveryContendedWaitIsCountedOnce) {
  const WrappedProcess wrapped;
  const WaitAttribution result =
      attribute_waits(wrapped.process, wrapped.lock.sites, rule(0, "^MutexLock::"));
  ASSERT_EQ(result.frames.size(), 3u);
  EXPECT_EQ(result.frames[0].frame.label, "Cache::get app.cc:40");
  EXPECT_EQ(result.frames[0].waits, 6u);
  // The inlined wrapper is a frame of its own; its caller is the frame it was inlined into.
  EXPECT_EQ(result.frames[1].frame.label, "Cache::put app.cc:70");
  EXPECT_EQ(result.frames[1].frame.function, "Cache::put");
  EXPECT_EQ(result.frames[1].frame.line, 70);
  EXPECT_EQ(result.frames[1].frame.offset, 0x3000u);
  EXPECT_EQ(result.frames[1].waits, 3u);
  EXPECT_EQ(result.frames[1].wait_ns, 6'000u);
  EXPECT_EQ(result.frames[2].frame.label, "Cache::evict app.cc:50");
  EXPECT_EQ(result.frames[2].waits, 4u);
  // 12 - 10 and 7 - 3 waits had no stack: they stay at their call sites.
  EXPECT_EQ(result.without_stack_waits, 6u);
  EXPECT_EQ(result.without_stack_wait_ns, 2'000u + 3'000u);
  EXPECT_EQ(result.contended(), wrapped.lock.contended);
  EXPECT_EQ(wrapped.lock.contended, 19u);
}

// The rows as "label xN waits", in order.
std::vector<std::string> rows_of(const WrappedProcess& wrapped, size_t depth,
                                 const std::string& pattern) {
  std::vector<std::string> rows;
  for (const AttributedWaits& row :
       attribute_waits(wrapped.process, wrapped.lock.sites, rule(depth, pattern)).frames)
    rows.push_back(row.frame.label + " x" + std::to_string(row.waits));
  return rows;
}
using Rows = std::vector<std::string>;

TEST(WaitAttribution, CallerDepthSkipsFirstThenSkipFramesAndShortStacksEndAtTheirOutermost) {
  const WrappedProcess wrapped;
  // Two frames out: Server::serve, by line (the third stack's through its inlined frames).
  EXPECT_EQ(rows_of(wrapped, 2, ""),
            (Rows{"Server::serve app.cc:80 x6", "Server::serve app.cc:90 x3",
                  "Server::serve app.cc:81 x4"}));
  // Then past Server::: nothing left in the first two (their outermost frame), main in the third.
  EXPECT_EQ(
      rows_of(wrapped, 2, "^Server::"),
      (Rows{"Server::serve app.cc:80 x6", "main app.cc:100 x3", "Server::serve app.cc:81 x4"}));
  // Deeper than every stack: each at its outermost frame.
  EXPECT_EQ(rows_of(wrapped, 60, ""), (Rows{"Server::serve app.cc:80 x6", "main app.cc:100 x3",
                                            "Server::serve app.cc:81 x4"}));
}

TEST(WaitAttribution, DepthZeroWithoutPatternKeepsTheCallSite) {
  const WrappedProcess wrapped;
  // Both return addresses are the same line: one row.
  EXPECT_EQ(rows_of(wrapped, 0, ""), (Rows{"MutexLock::MutexLock app.cc:10 x13"}));
}

TEST(WaitAttribution, TheNameMatchedIsTheFunctionWithoutParametersNotTheFile) {
  const WrappedProcess wrapped;
  const Rows unskipped = {"MutexLock::MutexLock app.cc:10 x13"};
  // "app" is in every frame's file but in no function name: nothing is skipped.
  EXPECT_EQ(rows_of(wrapped, 0, "app"), unskipped);
  // Nor is the parameter list part of the name ("MutexLock(Mutex*)")...
  EXPECT_EQ(rows_of(wrapped, 0, "Mutex\\*"), unskipped);
  // ... so that a whole name can be anchored at both ends.
  EXPECT_EQ(
      rows_of(wrapped, 0, "^MutexLock::MutexLock$"),
      (Rows{"Cache::get app.cc:40 x6", "Cache::put app.cc:70 x3", "Cache::evict app.cc:50 x4"}));
}

// Cut back into physical frames, each frame's inlined functions stay with it, innermost first,
// and a recursion's repeated address (the same frame twice in a row) stays two frames.
TEST(WaitAttribution, PhysicalFrameGroupsUndoLogicalFrames) {
  CodeLocation inlined = frame("MutexLock::MutexLock(Mutex*)", 10);
  inlined.inlined_from = {"Cache::put app.cc:70", "Server::serve app.cc:90"};
  const CodeLocation recursive = frame("walk(Node*)", 30);
  const std::vector<CodeLocation> stack = {inlined, recursive, recursive, frame("main", 100)};
  const std::vector<std::vector<CodeLocation>> groups =
      physical_frame_groups(logical_frames(stack));
  ASSERT_EQ(groups.size(), stack.size());
  std::vector<std::string> first_group;
  for (const CodeLocation& logical : groups[0]) first_group.push_back(logical.label);
  EXPECT_EQ(first_group,
            (std::vector<std::string>{"MutexLock::MutexLock app.cc:10", "Cache::put app.cc:70",
                                      "Server::serve app.cc:90"}));
  for (size_t i = 1; i < stack.size(); ++i) {
    ASSERT_EQ(groups[i].size(), 1u);
    EXPECT_EQ(groups[i][0].label, stack[i].label);
  }
}

TEST(WaitAttribution, AnInvalidPatternIsAnErrorValue) {
  std::string error;
  EXPECT_FALSE(make_wait_attribution_rule(0, "with_lock(", error));
  EXPECT_FALSE(error.empty());
}

}  // namespace
}  // namespace lockscope
