// The stack diff behind diff's flame graph, on hand-made runs whose addresses, pids and lock
// generations differ from run to run: stacks matched by their frames' names, each side's weight the
// median over its runs (a run without the stack counting 0), the tree's nodes adding the medians
// up, and the totals the medians of the runs' lock waits.
#include "analysis/compare/stack_diff.h"

#include <gtest/gtest.h>

#include "analysis/weighted_stacks.h"
#include "code_locations.h"

namespace lockscope::compare {
namespace {

// A frame of app.cc moved by `shift` bytes: another build, or another load of one.
CodeLocation frame(const std::string& function, int line, uint64_t shift) {
  CodeLocation where = code_location(function, "/src/app/app.cc", line);
  where.offset += shift;
  where.label = function + " /src/app/app.cc:" + std::to_string(line);  // as symbolized: a path
  return where;
}

// What one run of "app" waited: `lookup_ns` on a captured stack start_thread → worker → lookup
// (0: none), `flush_ns` at flush whose stack was not captured, `scan_ns` on scan's stack (another
// lock). Every address moves with `run`.
Profile run_of(uint64_t run, uint64_t lookup_ns, uint64_t flush_ns, uint64_t scan_ns) {
  const uint64_t shift = run * 0x100;
  ProcessProfile process;
  process.pid = 1000 + static_cast<uint32_t>(run);
  process.executable = "/opt/app/bin/app";
  const CodeLocation lookup = frame("lookup", 41, shift), flush = frame("flush", 70, shift),
                     scan = frame("scan", 90, shift);
  process.stacks = {{lookup, frame("worker", 20, shift), frame("start_thread", 1, shift)},
                    {scan, frame("worker", 22, shift), frame("start_thread", 1, shift)}};
  const auto site = [](const CodeLocation& where, uint64_t wait_ns, std::size_t stack) {
    SiteSummary out;
    out.operation = format::Operation::kLock;
    out.location = where;
    out.count = out.contended = wait_ns ? 2 : 0;
    out.wait_sum_ns = wait_ns;
    if (stack != SIZE_MAX && wait_ns) out.stacks = {SiteStack{stack, 2, wait_ns}};
    return out;
  };
  LockSummary cache;
  cache.address = 0x5000 + shift;
  cache.generation = static_cast<uint32_t>(run % 2);
  cache.name = "cache";
  cache.name_source = LockNameSource::kSymbol;
  cache.sites = {site(lookup, lookup_ns, 0), site(flush, flush_ns, SIZE_MAX)};
  cache.finish();
  LockSummary index = cache;
  index.name = "index";
  index.sites = {site(scan, scan_ns, 1)};
  index.finish();
  process.locks = {cache, index};
  Profile profile;
  profile.processes = {process};
  return profile;
}

std::vector<const Profile*> pointers(const std::vector<Profile>& runs) {
  std::vector<const Profile*> out;
  for (const Profile& run : runs) out.push_back(&run);
  return out;
}

const std::vector<std::string> kLookup = {"app", "start_thread app.cc:1", "worker app.cc:20",
                                          "lookup app.cc:41", "mutex cache"};
const std::vector<std::string> kFlush = {"app", kStackNotCapturedFrame, "flush app.cc:70",
                                         "mutex cache"};
const std::vector<std::string> kScan = {"app", "start_thread app.cc:1", "worker app.cc:22",
                                        "scan app.cc:90", "mutex index"};

const StackChange* find(const StackDiff& diff, const std::vector<std::string>& frames) {
  for (const StackChange& stack : diff.stacks)
    if (stack.frames == frames) return &stack;
  return nullptr;
}

// The node reached from the root by `path` (the root's own name left out), or null.
const StackDiffNode* node_at(const StackDiff& diff, const std::vector<std::string>& path) {
  const StackDiffNode* at = &diff.nodes.at(0);
  for (const std::string& name : path) {
    const StackDiffNode* next = nullptr;
    for (std::size_t child : at->children)
      if (diff.nodes[child].name == name) next = &diff.nodes[child];
    if (next == nullptr) return nullptr;
    at = next;
  }
  return at;
}

TEST(StackDiff, StacksMatchByNameAndWeighTheirMedianOverEachSidesRuns) {
  // Base: lookup 100, 300 (median 200); flush 50, 70 (60); scan in neither.
  const std::vector<Profile> base = {run_of(1, 100, 50, 0), run_of(2, 300, 70, 0)};
  // New: lookup 400, —, 500 (median 400); flush gone; scan 90, 110, — (median 90).
  const std::vector<Profile> changed = {run_of(3, 400, 0, 90), run_of(4, 0, 0, 110),
                                        run_of(5, 500, 0, 0)};
  const StackDiff diff = stack_diff(pointers(base), pointers(changed));
  EXPECT_EQ(diff.base_runs, 2u);
  EXPECT_EQ(diff.changed_runs, 3u);
  ASSERT_EQ(diff.stacks.size(), 3u);
  const StackChange* lookup = find(diff, kLookup);
  ASSERT_NE(lookup, nullptr);
  EXPECT_TRUE(lookup->captured);
  EXPECT_EQ(lookup->base_ns, (std::vector<double>{100, 300}));
  EXPECT_EQ(lookup->changed_ns, (std::vector<double>{400, 0, 500}));
  EXPECT_EQ(lookup->base_median_ns, 200);
  EXPECT_EQ(lookup->changed_median_ns, 400);
  const StackChange* flush = find(diff, kFlush);
  ASSERT_NE(flush, nullptr);
  EXPECT_FALSE(flush->captured);
  EXPECT_EQ(flush->base_median_ns, 60);
  EXPECT_EQ(flush->changed_median_ns, 0);
  const StackChange* scan = find(diff, kScan);
  ASSERT_NE(scan, nullptr);
  EXPECT_EQ(scan->base_ns, (std::vector<double>{0, 0}));
  EXPECT_EQ(scan->changed_median_ns, 90);
  // The runs' totals: base 150, 370; new 490, 110, 500.
  EXPECT_EQ(diff.base_total.median, 260);
  EXPECT_EQ(diff.base_total.min, 150);
  EXPECT_EQ(diff.changed_total.median, 490);
  EXPECT_EQ(diff.changed_total.min, 110);
  EXPECT_EQ(diff.changed_total.max, 500);
}

TEST(StackDiff, TheTreeAddsTheMediansUpUnderTheProcessAndMarksItsFrames) {
  const std::vector<Profile> base = {run_of(1, 100, 50, 0), run_of(2, 300, 70, 0)};
  const std::vector<Profile> changed = {run_of(3, 400, 0, 90), run_of(4, 0, 0, 110),
                                        run_of(5, 500, 0, 0)};
  const StackDiff diff = stack_diff(pointers(base), pointers(changed));
  ASSERT_FALSE(diff.nodes.empty());
  // One process: it is the root. Its weights are the stacks' medians added up (200 + 60 + 0 and
  // 400 + 0 + 90; the runs' totals are another figure, see the next test).
  const StackDiffNode& root = diff.nodes[0];
  EXPECT_EQ(root.name, "app");
  EXPECT_EQ(root.kind, StackFrameKind::kProcess);
  EXPECT_EQ(root.base_ns, 260);
  EXPECT_EQ(root.changed_ns, 490);
  const StackDiffNode* worker = node_at(diff, {"start_thread app.cc:1"});
  ASSERT_NE(worker, nullptr);
  EXPECT_EQ(worker->kind, StackFrameKind::kCode);
  EXPECT_EQ(worker->base_ns, 200);     // lookup's 200 + scan's 0
  EXPECT_EQ(worker->changed_ns, 490);  // 400 + 90
  const StackDiffNode* lock = node_at(diff, {kLookup.begin() + 1, kLookup.end()});
  ASSERT_NE(lock, nullptr);
  EXPECT_EQ(lock->kind, StackFrameKind::kLock);
  EXPECT_EQ(lock->delta_ns(), 200);
  const StackDiffNode* not_captured = node_at(diff, {kStackNotCapturedFrame});
  ASSERT_NE(not_captured, nullptr);
  EXPECT_EQ(not_captured->kind, StackFrameKind::kNotCaptured);
  EXPECT_EQ(not_captured->delta_ns(), -60);
  // Children sorted by name; every node's weights are its children's added up.
  for (const StackDiffNode& node : diff.nodes) {
    double base_sum = 0, changed_sum = 0;
    for (std::size_t i = 0; i < node.children.size(); ++i) {
      base_sum += diff.nodes[node.children[i]].base_ns;
      changed_sum += diff.nodes[node.children[i]].changed_ns;
      if (i > 0) {
        EXPECT_LT(diff.nodes[node.children[i - 1]].name, diff.nodes[node.children[i]].name);
      }
    }
    if (node.children.empty()) continue;
    EXPECT_EQ(node.base_ns, base_sum) << node.name;
    EXPECT_EQ(node.changed_ns, changed_sum) << node.name;
  }
}

// Medians do not add up: the root is the stacks' medians added up, the totals the runs'.
TEST(StackDiff, TheTotalsAreTheMediansOfTheRunsNotTheRootsSum) {
  // lookup 10, 0, 30 (median 10); scan 0, 20, 30 (median 20): root 30; totals 10, 20, 60: 20.
  const std::vector<Profile> runs = {run_of(1, 10, 0, 0), run_of(2, 0, 0, 20),
                                     run_of(3, 30, 0, 30)};
  const StackDiff diff = stack_diff(pointers(runs), pointers(runs));
  EXPECT_EQ(diff.nodes.at(0).base_ns, 30);
  EXPECT_EQ(diff.base_total.median, 20);
  EXPECT_EQ(diff.changed_total.median, 20);
  for (const StackDiffNode& node : diff.nodes) EXPECT_EQ(node.delta_ns(), 0) << node.name;
}

// Two processes of one executable: "app" and "app#2" under a root of their own; and no stack at
// all: no tree.
TEST(StackDiff, SeveralProcessesHangUnderOneRootAndNoWaitsMakeNoTree) {
  Profile two = run_of(1, 100, 0, 0);
  two.processes.push_back(run_of(2, 0, 0, 40).processes[0]);
  const StackDiff diff = stack_diff({&two}, {&two});
  ASSERT_FALSE(diff.nodes.empty());
  EXPECT_EQ(diff.nodes[0].kind, StackFrameKind::kProgram);
  EXPECT_EQ(diff.nodes[0].changed_ns, 140);
  const StackDiffNode* second = node_at(diff, {"app#2"});
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->kind, StackFrameKind::kProcess);
  EXPECT_EQ(second->base_ns, 40);
  const Profile idle = run_of(1, 0, 0, 0);
  const StackDiff none = stack_diff({&idle}, {&idle});
  EXPECT_TRUE(none.stacks.empty());
  EXPECT_TRUE(none.nodes.empty());
  EXPECT_EQ(none.base_total.median, 0);
}

}  // namespace
}  // namespace lockscope::compare
