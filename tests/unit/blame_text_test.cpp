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
  const SiteSummary writer = waiting_site("writer w.c:20", 0x20,
                                          {Blame{at("writer w.c:20", 0x20), 4, 4'000'000}});
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

TEST(BlameText, OneWaitingSiteHasNoSummaryAndReadersAreNamed) {
  const SiteSummary reader =
      waiting_site("reader r.c:10", 0x10, {Blame{CodeLocation{}, 2, 2'000'000}});
  std::ostringstream out;
  write_blame({&reader}, out);
  EXPECT_NE(out.str().find("(not known: behind readers)"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("holds that made"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace lockscope
