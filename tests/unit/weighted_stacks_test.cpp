// The weighted-stacks view over a hand-built process: waits on captured stacks (outermost first,
// inlined functions expanded), the rest at the call site, a mutex's re-acquisitions after condition
// waits counted, other primitives left out; holds at their acquire sites; totals equal the locks'.
#include "analysis/weighted_stacks.h"

#include <gtest/gtest.h>

#include "code_locations.h"

namespace lockscope {
namespace {

CodeLocation frame(const std::string& function, int line) {
  return code_location(function, "app.cc", line);
}

SiteSummary site(format::Operation operation, const CodeLocation& where, uint64_t contended,
                 uint64_t wait_ns, uint64_t hold_ns = 0) {
  SiteSummary out;
  out.operation = operation;
  out.location = where;
  out.count = contended + 10;
  out.contended = contended;
  out.wait_sum_ns = wait_ns;
  out.hold_sum_ns = hold_ns;
  out.hold_samples = hold_ns ? 5 : 0;
  return out;
}

// A mutex waited on at `take` (2 of 5 waits with a stack whose call site was inlined into
// `update`), re-taken after condition waits; a condvar and a semaphore with waits of their own.
ProcessProfile process_with_waits() {
  ProcessProfile process;
  process.pid = 42;
  process.arguments = {"/usr/bin/server", "--port"};
  CodeLocation take = frame("take", 10);
  take.inlined_from = {"update app.cc:20"};
  process.stacks = {{take, frame("worker", 30), frame("start_thread", 1)}};
  LockSummary mutex;
  mutex.address = 0xabc;
  SiteSummary lock_site = site(format::Operation::kLock, take, 5, 5'000, 700);
  lock_site.stacks = {SiteStack{0, 2, 3'000}};
  mutex.sites = {lock_site, site(format::Operation::kCondReacquire, frame("wait_for", 40), 1, 400),
                 site(format::Operation::kUnlock, frame("take", 12), 0, 0)};
  mutex.finish();
  LockSummary condvar;
  condvar.primitive = format::Primitive::kCondVar;
  condvar.sites = {site(format::Operation::kCondWait, frame("wait_for", 39), 3, 90'000)};
  condvar.finish();
  LockSummary semaphore;
  semaphore.primitive = format::Primitive::kSemaphore;
  semaphore.sites = {site(format::Operation::kSemWait, frame("consume", 50), 3, 80'000)};
  semaphore.finish();
  process.locks = {mutex, condvar, semaphore};
  return process;
}

std::vector<std::string> labels(const WeightedStack& stack) {
  std::vector<std::string> out;
  for (const CodeLocation& where : stack.frames) out.push_back(where.label);
  return out;
}

TEST(WeightedStacks, WaitsOnTheirStacksOutermostFirstAndTheRestAtTheCallSite) {
  const ProcessProfile process = process_with_waits();
  const std::vector<WeightedStack> stacks = weighted_stacks(process, StackWeight::kWait);
  ASSERT_EQ(stacks.size(), 3u);
  EXPECT_TRUE(stacks[0].captured);
  EXPECT_EQ(labels(stacks[0]),
            (std::vector<std::string>{"start_thread app.cc:1", "worker app.cc:30",
                                      "update app.cc:20", "take app.cc:10"}));
  EXPECT_EQ(stacks[0].weight_ns, 3'000u);
  EXPECT_EQ(stacks[0].count, 2u);
  EXPECT_FALSE(stacks[1].captured);  // the 3 waits without a stack: the call site, inlined too
  EXPECT_EQ(labels(stacks[1]), (std::vector<std::string>{"update app.cc:20", "take app.cc:10"}));
  EXPECT_EQ(stacks[1].weight_ns, 2'000u);
  EXPECT_EQ(stacks[1].count, 3u);
  EXPECT_EQ(stacks[2].operation, format::Operation::kCondReacquire);
  EXPECT_EQ(stacks[2].weight_ns, 400u);
  // The mutex's wait total (its re-acquisitions included); not the condvar's nor the semaphore's.
  EXPECT_EQ(lock_time_total(process, StackWeight::kWait), process.locks[0].wait_sum_ns);
  EXPECT_EQ(process.locks[0].wait_sum_ns, 5'400u);
  uint64_t sum = 0;
  for (const WeightedStack& stack : stacks) sum += stack.weight_ns;
  EXPECT_EQ(sum, 5'400u);
}

TEST(WeightedStacks, HoldsAtTheirAcquireSites) {
  const ProcessProfile process = process_with_waits();
  const std::vector<WeightedStack> stacks = weighted_stacks(process, StackWeight::kHold);
  ASSERT_EQ(stacks.size(), 1u);
  EXPECT_EQ(labels(stacks[0]), (std::vector<std::string>{"update app.cc:20", "take app.cc:10"}));
  EXPECT_EQ(stacks[0].weight_ns, 700u);
  EXPECT_EQ(stacks[0].count, process.locks[0].sites[0].acquisitions());
  EXPECT_EQ(lock_time_total(process, StackWeight::kHold), 700u);
}

// Holds whose release stack was captured weigh on it; the rest stays at the acquire site, and a
// stack claiming more than the site's total is left out.
TEST(WeightedStacks, HoldsOnTheStacksTheyWereReleasedFrom) {
  ProcessProfile process = process_with_waits();
  process.stacks.push_back({frame("release", 11), frame("worker", 31), frame("start_thread", 1)});
  SiteSummary& lock_site = process.locks[0].sites[0];
  lock_site.hold_stacks = {HoldStack{1, 4, 600}, HoldStack{1, 1, 500}};
  const std::vector<WeightedStack> stacks = weighted_stacks(process, StackWeight::kHold);
  ASSERT_EQ(stacks.size(), 2u);
  EXPECT_TRUE(stacks[0].captured);
  EXPECT_EQ(labels(stacks[0]), (std::vector<std::string>{"start_thread app.cc:1",
                                                         "worker app.cc:31", "release app.cc:11"}));
  EXPECT_EQ(stacks[0].weight_ns, 600u);
  EXPECT_EQ(stacks[0].count, 4u);
  EXPECT_FALSE(stacks[1].captured);
  EXPECT_EQ(stacks[1].weight_ns, 100u);
  EXPECT_EQ(stacks[1].count, lock_site.acquisitions() - 4);
  EXPECT_EQ(stacks[0].weight_ns + stacks[1].weight_ns,
            lock_time_total(process, StackWeight::kHold));
}

TEST(WeightedStacks, StacksClaimingMoreThanTheSiteLeaveNothingAtTheCallSite) {
  ProcessProfile process = process_with_waits();
  process.locks[0].sites[0].stacks = {SiteStack{0, 9, 9'000}};
  for (const WeightedStack& stack : weighted_stacks(process, StackWeight::kWait))
    EXPECT_TRUE(stack.captured || stack.operation == format::Operation::kCondReacquire);
}

TEST(WeightedStacks, FrameNames) {
  ProcessProfile process = process_with_waits();
  EXPECT_EQ(process_frame_name(process), "pid 42 (server)");
  process.arguments.clear();
  process.executable = "";
  EXPECT_EQ(process_frame_name(process), "pid 42");
  LockSummary rwlock;
  rwlock.primitive = format::Primitive::kRwLock;
  rwlock.address = 0x5610;
  rwlock.generation = 2;
  EXPECT_EQ(lock_frame_name(rwlock, format::Operation::kReadLock), "rwlock 0x5610#2 (read)");
  EXPECT_EQ(lock_frame_name(rwlock, format::Operation::kWriteLock), "rwlock 0x5610#2 (write)");
  EXPECT_EQ(lock_frame_name(process.locks[0], format::Operation::kCondReacquire),
            "mutex 0xabc (after cond wait)");
  StackWeight weight = StackWeight::kWait;
  EXPECT_TRUE(parse_stack_weight("hold", weight));
  EXPECT_EQ(weight, StackWeight::kHold);
  EXPECT_FALSE(parse_stack_weight("cpu", weight));
}

}  // namespace
}  // namespace lockscope
