#include "report/blame_text.h"

#include <gtest/gtest.h>

#include <sstream>

namespace lockscope {
namespace {

CodeLocation at(const char* label, uint64_t offset) {
  CodeLocation where;
  where.module = 0;
  where.offset = offset;
  where.label = label;
  return where;
}

SiteSummary waiting_site(const char* label, uint64_t offset, std::vector<Blame> blame) {
  SiteSummary site;
  site.location = at(label, offset);
  for (const Blame& row : blame) {
    site.contended += row.waits;
    site.wait_sum_ns += row.wait_ns;
  }
  site.blame = std::move(blame);
  return site;
}

TEST(BlameText, EachWaitingSiteListsItsHoldersAndSeveralSitesSumThemUp) {
  const SiteSummary reader = waiting_site("reader r.c:10", 0x10,
                                          {Blame{at("writer w.c:20", 0x20), 3, 3'000'000},
                                           Blame{at("reader r.c:10", 0x10), 1, 1'000'000}});
  const SiteSummary writer =
      waiting_site("writer w.c:20", 0x20, {Blame{at("writer w.c:20", 0x20), 4, 4'000'000}});
  std::ostringstream out;
  write_blame({&reader, &writer}, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("waits at reader r.c:10 were behind holds taken at:\n"
                      "      75.0 %  3.00ms in 3 waits  writer w.c:20\n"
                      "      25.0 %  1.00ms in 1 wait  reader r.c:10\n"),
            std::string::npos)
      << text;
  // The writer's waits were all behind its own line: no lines of their own.
  EXPECT_EQ(text.find("waits at writer"), std::string::npos) << text;
  EXPECT_NE(text.find("holds that made the others wait, by where they were taken:\n"
                      "      87.5 %  7.00ms in 7 waits  writer w.c:20\n"
                      "      12.5 %  1.00ms in 1 wait  reader r.c:10\n"),
            std::string::npos)
      << text;
}

// Rows of one holder site that differ by stack are one line per holder site; the holders' stacks
// are listed apart, most wait first, each with the site its holds were taken at.
TEST(BlameText, RowsSplitByStackAreSummedPerHolderAndTheHolderStacksListed) {
  ProcessProfile process;
  process.stacks = {{at("unlock u.c:5", 0x5), at("caller_a u.c:9", 0x9)},
                    {at("holder h.c:20", 0x20), at("caller_b u.c:8", 0x8)}};
  Blame from_a{at("holder h.c:20", 0x20), 1, 1'000'000};
  from_a.holder_stack = 0;
  Blame from_b{at("holder h.c:20", 0x20), 3, 3'000'000};
  from_b.holder_stack = 1;
  from_b.holder_stack_at_acquire = true;
  const Blame unknown{at("holder h.c:20", 0x20), 1, 500'000};
  const SiteSummary waiter = waiting_site("waiter w.c:1", 0x1, {from_a, from_b, unknown});
  std::ostringstream blame;
  write_blame({&waiter}, blame);
  EXPECT_EQ(blame.str(),
            "  waits at waiter w.c:1 were behind holds taken at:\n"
            "     100.0 %  4.50ms in 5 waits  holder h.c:20\n");
  StackIds ids;
  std::ostringstream stacks;
  write_holder_stacks(process, {&waiter}, 5, ids, stacks);
  EXPECT_EQ(
      stacks.str(),
      "  stacks of the holds they waited behind (4 of 5 waits known):\n"
      "    3.00ms in 3 waits, behind holds taken at holder h.c:20 (stack of its acquisition): "
      "stack #1\n"
      "      holder h.c:20\n"
      "      caller_b u.c:8\n"
      "    1.00ms in 1 wait, behind holds taken at holder h.c:20 (stack at its release): "
      "stack #2\n"
      "      unlock u.c:5\n"
      "      caller_a u.c:9\n");
  // Shown again (the stacks the holds were released from, another lock's): by id only.
  std::ostringstream again;
  write_holder_stacks(process, {&waiter}, 1, ids, again);
  EXPECT_EQ(
      again.str(),
      "  stacks of the holds they waited behind (4 of 5 waits known):\n"
      "    3.00ms in 3 waits, behind holds taken at holder h.c:20 (stack of its acquisition): "
      "stack #1, above\n"
      "    ... 1 more stack\n");
  std::ostringstream none;
  write_holder_stacks(process, {}, 5, ids, none);
  EXPECT_EQ(none.str(), "");
}

TEST(BlameText, OneWaitingSiteHasNoSummaryAndReadersAreNamed) {
  const SiteSummary reader =
      waiting_site("reader r.c:10", 0x10, {Blame{CodeLocation{}, 2, 2'000'000}});
  std::ostringstream out;
  write_blame({&reader}, out);
  EXPECT_NE(out.str().find("(not known: behind readers, or released before the wait was seen)"),
            std::string::npos)
      << out.str();
  EXPECT_EQ(out.str().find("holds that made"), std::string::npos) << out.str();
}

// Two sites' stacks are one list, the lock's, most wait first, each stack from its call site.
TEST(BlameText, WaitStacksOfSeveralSitesAreListedPerLock) {
  ProcessProfile process;
  process.stacks = {{at("lock_a a.c:1", 0x1), at("caller_a a.c:9", 0x9)},
                    {at("lock_b b.c:2", 0x2), at("caller_b b.c:8", 0x8)}};
  SiteSummary a = waiting_site("lock_a a.c:1", 0x1, {});
  a.contended = 5;
  a.stacks = {SiteStack{0, 4, 1'000'000}};
  SiteSummary b = waiting_site("lock_b b.c:2", 0x2, {});
  b.contended = 2;
  b.stacks = {SiteStack{1, 2, 3'000'000}};
  StackIds ids;
  std::ostringstream out;
  write_wait_stacks(process, {&a, &b}, 5, ids, out);
  EXPECT_EQ(out.str(),
            "  stacks of the waits on this lock, across its 2 call sites (6 of 7 waits captured):\n"
            "    3.00ms in 2 waits: stack #1\n"
            "      lock_b b.c:2\n"
            "      caller_b b.c:8\n"
            "    1.00ms in 4 waits: stack #2\n"
            "      lock_a a.c:1\n"
            "      caller_a a.c:9\n");
  std::ostringstream one;
  write_wait_stacks(process, {&a}, 5, ids, one);
  EXPECT_EQ(one.str().rfind("  stacks of the waits at lock_a a.c:1 (4 of 5 waits captured):\n", 0),
            0u)
      << one.str();
}

TEST(BlameText, AttributedWaitsShowShareAndTheWaitsWithoutAStack) {
  WaitAttribution attribution;
  attribution.frames = {AttributedWaits{at("worker w.c:36", 0x36), 3, 3'000'000},
                        AttributedWaits{at("main w.c:50", 0x50), 1, 500'000}};
  attribution.without_stack_waits = 2;
  attribution.without_stack_wait_ns = 500'000;
  WaitAttributionRule rule;
  rule.caller_depth = 1;
  rule.skip_frames = "^with_";
  std::ostringstream out;
  write_wait_attribution(attribution, rule, out);
  EXPECT_EQ(
      out.str(),
      "  contended waits by caller outside the wrappers (--caller-depth 1 --skip-frames "
      "'^with_'):\n"
      "      75.0 %  3.00ms in 3 waits  worker w.c:36\n"
      "      12.5 %  500µs in 1 wait  main w.c:50\n"
      "    2 of 6 contended waits had no captured stack and stay at their call site (500µs)\n");
}

}  // namespace
}  // namespace lockscope
