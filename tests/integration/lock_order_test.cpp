// Lock order: edges between locks taken while holding others, and the inversions among them, in
// the profile, the text report and the JSON report.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "analysis/lock_order_cycles.h"
#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

TEST(LockOrder, TwoThreadsTakingTwoLocksInOppositeOrdersAreOneInversion) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "lock_order", {"inversion"});
  ASSERT_EQ(process.lock_order.size(), 2u);
  const std::vector<LockOrderInversion> inversions = find_lock_order_inversions(process);
  ASSERT_EQ(inversions.size(), 1u);
  ASSERT_EQ(inversions[0].edges.size(), 2u);
  const LockOrderEdge& first = process.lock_order[inversions[0].edges[0]];
  const LockOrderEdge& second = process.lock_order[inversions[0].edges[1]];
  EXPECT_EQ(first.from_lock, second.to_lock);
  EXPECT_EQ(first.to_lock, second.from_lock);
  EXPECT_NE(first.tid, second.tid);
  // Both orders, each with where the held lock and the other were taken.
  const auto at = [](const CodeLocation& where, const char* marker) {
    return located_at(where, "lock_order.c", marker_line("lock_order", marker));
  };
  const LockOrderEdge& a_b = at(first.from_site, "a-first") ? first : second;
  const LockOrderEdge& b_a = at(first.from_site, "a-first") ? second : first;
  EXPECT_TRUE(at(a_b.from_site, "a-first")) << a_b.from_site.label;
  EXPECT_TRUE(at(a_b.to_site, "b-under-a")) << a_b.to_site.label;
  EXPECT_TRUE(at(b_a.from_site, "b-first")) << b_a.from_site.label;
  EXPECT_TRUE(at(b_a.to_site, "a-under-b")) << b_a.to_site.label;

  const CommandResult text = run_lockscope({"report", dir.path()});
  ASSERT_EQ(text.exit_status, 0) << text.err;
  EXPECT_NE(text.out.find("inversion 1: pid"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("inversion 2:"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("lock_order.c:" + std::to_string(marker_line("lock_order", "a-under-b"))),
            std::string::npos)
      << text.out;

  const CommandResult json_run = run_lockscope({"report", "-f", "json", dir.path()});
  ASSERT_EQ(json_run.exit_status, 0) << json_run.err;
  const auto document = nlohmann::json::parse(json_run.out);
  const auto& order = document["processes"][0]["lock_order"];
  EXPECT_EQ(order["edges"].size(), 2u);
  ASSERT_EQ(order["inversions"].size(), 1u);
  EXPECT_EQ(order["inversions"][0]["edges"].size(), 2u);
}

// No false positives: locks always nested in one order, a trylock of an outer lock while holding
// an inner one (a trylock never waits), a recursive mutex re-taken while held.
TEST(LockOrder, LocksAlwaysTakenInOneOrderAreNoInversion) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "lock_order", {"consistent"});
  EXPECT_EQ(process.lock_order.size(), 3u)
      << "A->B, B->C, C->recursive (trylocks and re-takes are no edge)";
  EXPECT_TRUE(find_lock_order_inversions(process).empty());
  const CommandResult text = run_lockscope({"report", dir.path()});
  EXPECT_NE(text.out.find("none: 3 lock-order edges"), std::string::npos) << text.out;
}

// The other fixtures that nest locks: none reports an inversion.
TEST(LockOrder, FixturesThatNestLocksShowNoInversion) {
  const std::vector<std::vector<std::string>> programs = {
      {"counter_threads", "2", "100"}, {"condvar_hold"},   {"handoffs", "100"},
      {"rwlock_sides", "2", "100"},    {"cxx_primitives"}, {"mutex_semantics"}};
  size_t edges = 0;
  for (const auto& program : programs) {
    TemporaryDirectory dir;
    std::vector<std::string> args = {"record", "-o", dir.path(), "--", fixture(program[0])};
    args.insert(args.end(), program.begin() + 1, program.end());
    const CommandResult run = run_lockscope(args);
    ASSERT_EQ(run.exit_status, 0) << program[0] << ": " << run.err;
    for (const ProcessProfile& process : load_profile(dir.path()).processes) {
      edges += process.lock_order.size();
      EXPECT_TRUE(find_lock_order_inversions(process).empty()) << program[0];
    }
  }
  EXPECT_GT(edges, 0u) << "some of these fixtures nest locks";
}

// Regressions: a lock held deeper in the stack and taken again never waits, so it makes no edge
// (before, the re-take under N made N -> R and, with R -> N, an inversion that cannot happen).
TEST(LockOrder, ALockTakenAgainWhileHeldMakesNoEdge) {
  for (const char* mode : {"retake", "retake-errorcheck"}) {
    TemporaryDirectory dir;
    const ProcessProfile process = record_unchanged(dir, "lock_order", {mode});
    EXPECT_EQ(process.lock_order.size(), 1u) << mode << ": R -> N only";
    EXPECT_TRUE(find_lock_order_inversions(process).empty()) << mode;
  }
}

// Inner locks taken in turn under each outer lock: every edge once, the ones to a lock re-made at
// the same address (a new lock, the same call sites) and to a lock taken only at the end included.
// (The known ones are looked up by the locks their cached entries name: a lookup that took the
// first A for the second would leave its 64 edges out.)
TEST(LockOrder, InnerLocksTakenInTurnUnderManyOuterLocksMakeEachEdgeOnce) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "lock_order", {"rotation"});
  EXPECT_EQ(process.lock_order.size(), 64u * 3 + 64 + 1);
  std::set<std::pair<size_t, size_t>> distinct;
  for (const LockOrderEdge& edge : process.lock_order)
    distinct.insert({edge.from_lock, edge.to_lock});
  EXPECT_EQ(distinct.size(), process.lock_order.size()) << "no edge twice";
  EXPECT_TRUE(find_lock_order_inversions(process).empty());
}

// A condition wait re-takes its mutex while holding the locks taken under it since: L -> M, and
// with M -> L a real inversion (before, the re-take inside glibc made no edge).
TEST(LockOrder, AConditionWaitReTakingItsMutexUnderAnotherLockIsAnEdge) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "lock_order", {"condwait"});
  ASSERT_EQ(process.lock_order.size(), 2u);
  const auto inversions = find_lock_order_inversions(process);
  ASSERT_EQ(inversions.size(), 1u);
  bool reacquire_edge = false;
  for (const LockOrderEdge& edge : process.lock_order)
    if (edge.to_operation == format::Operation::kCondReacquire) {
      reacquire_edge = true;
      EXPECT_TRUE(located_at(edge.to_site, "lock_order.c", marker_line("lock_order", "cond-wait")));
      EXPECT_TRUE(located_at(edge.from_site, "lock_order.c",
                             marker_line("lock_order", "under-cond-mutex")));
    }
  EXPECT_TRUE(reacquire_edge);
}

// Both orders made through one helper: the two edges share their line, and each one's call stack
// (captured once, as the edge is first seen) names the caller that made it, in the text too.
TEST(LockOrder, EachEdgeKeepsTheStackItWasMadeFrom) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "lock_order", {"wrapped"});
  const std::vector<LockOrderInversion> inversions = find_lock_order_inversions(process);
  ASSERT_EQ(inversions.size(), 1u);
  std::vector<int> callers;
  for (size_t e : inversions[0].edges) {
    const LockOrderEdge& edge = process.lock_order[e];
    EXPECT_TRUE(located_at(edge.to_site, "lock_order.c", marker_line("lock_order", "take-second")))
        << edge.to_site.label;
    ASSERT_NE(edge.stack, LockOrderEdge::kNoStack);
    const std::vector<CodeLocation>& frames = process.stacks[edge.stack];
    ASSERT_GE(frames.size(), 2u);
    EXPECT_TRUE(located_at(frames[0], "lock_order.c", marker_line("lock_order", "take-second")));
    callers.push_back(frames[1].line);
  }
  std::sort(callers.begin(), callers.end());
  EXPECT_EQ(callers, (std::vector<int>{marker_line("lock_order", "transfer-ab"),
                                       marker_line("lock_order", "transfer-ba")}));
  const CommandResult text = run_lockscope({"report", dir.path()});
  // (The file is named relative to the working directory when under it, else in full.)
  const size_t from = text.out.find("from transfer_ab ");
  ASSERT_NE(from, std::string::npos) << text.out;
  const std::string line = text.out.substr(from, text.out.find('\n', from) - from);
  EXPECT_NE(
      line.find(fmt::format("fixtures/lock_order.c:{}", marker_line("lock_order", "transfer-ab"))),
      std::string::npos)
      << line;
}

}  // namespace
}  // namespace lockscope::testing
