// The text report's first screen (report/findings_text.h) over findings made by hand: whatever
// the findings say, and however long their names and sites, it stays within 80 columns and 40
// lines, shows at most five findings after the verdict in their order, and keeps what each must
// say: the lock by name, the site's file:line, the figures and the advice.
#include "report/findings_text.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "code_locations.h"
#include "report/text_table.h"

namespace lockscope {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A process with `count` mutexes, each named after its first use at a deep source path.
Profile profile_with_locks(size_t count, size_t processes = 1) {
  Profile profile;
  profile.directory = "prof";
  for (size_t p = 0; p < processes; ++p) {
    ProcessProfile process;
    process.pid = static_cast<uint32_t>(4000 + p);
    for (size_t l = 0; l < count; ++l) {
      LockSummary lock;
      lock.address = 0x7fff0000 + 0x40 * l;
      lock.name = fmt::format(
          "serve_requests_{} /home/builder/projects/server/src/very/deep/directory/tree/"
          "request_handler.cpp:{}",
          l, 80 + l);
      lock.name_source = LockNameSource::kFirstUse;
      process.locks.push_back(lock);
    }
    profile.processes.push_back(process);
  }
  return profile;
}

Finding verdict() {
  Finding finding;
  finding.rule = "verdict";
  finding.severity = Severity::kWarning;
  finding.title = "lock waits are 26.4 % of thread time: locks are a bottleneck";
  finding.evidence = {{"lock_wait_ns", 61.4e6, "61.4ms waiting for locks"},
                      {"thread_time_ns", 232e6, "232ms of thread time (5 threads)"},
                      {"share", 0.264, "26.4 %"}};
  finding.time_at_stake_ns = 61'400'000;
  return finding;
}

// A finding with everything long: title, two locks, three inlined sites, six figures, advice.
Finding long_finding(size_t index, uint64_t at_stake_ns) {
  Finding finding;
  finding.rule = "serial-bottleneck";
  finding.title = fmt::format(
      "finding {}: the mutex first taken at serve_requests_{} is where the worker threads spend "
      "most of their lives waiting for each other, one at a time",
      index, index);
  finding.locks = {{0, index}, {0, index + 1}, {0, index + 2}};
  for (int line : {83, 91, 99}) {
    CodeLocation site = code_location(fmt::format("handle_request_number_{}", index),
                                      "/home/builder/projects/server/src/very/deep/directory/"
                                      "tree/request_handler.cpp",
                                      line);
    site.inlined_from = {"worker_main_loop /home/builder/projects/server/src/worker.cpp:210"};
    finding.sites.push_back(site);
  }
  for (int e = 0; e < 6; ++e)
    finding.evidence.push_back({fmt::format("figure_{}", e), double(e),
                                fmt::format("figure {} of finding {}: 4,351 of 800,000 "
                                            "acquisitions waited",
                                            e, index)});
  finding.advice =
      "move the work out of the critical section at request_handler.cpp:83, or split "
      "the lock by key so that the workers stop queueing behind one another";
  finding.time_at_stake_ns = at_stake_ns;
  return finding;
}

TEST(FindingsText, FirstScreenFitsEightyColumnsAndFortyLinesWhateverTheFindingsSay) {
  const Profile profile = profile_with_locks(12, 2);
  const ProfileViews views(profile);
  std::vector<Finding> findings = {verdict()};
  for (size_t i = 0; i < 8; ++i) findings.push_back(long_finding(i, 1'000'000'000 - i));
  std::ostringstream out;
  const size_t left_out = write_first_screen(views, findings,
                                             "lockscope report of prof: 2 "
                                             "processes, 10 threads",
                                             false, out);
  const std::vector<std::string> lines = lines_of(out.str());
  EXPECT_LE(lines.size(), kFirstScreenLines) << out.str();
  for (const std::string& line : lines) EXPECT_LE(display_width(line), kFirstScreenWidth) << line;
  // The findings in their order, numbered; those that did not fit counted, never dropped silently.
  size_t shown = 0;
  for (size_t i = 0; i < 8; ++i)
    if (out.str().find(fmt::format("{}. finding {}:", i + 1, i)) != std::string::npos) {
      EXPECT_EQ(shown, i) << "finding " << i << " shown after a gap\n" << out.str();
      ++shown;
    }
  EXPECT_GE(shown, 1u) << out.str();
  EXPECT_LE(shown, kFirstScreenFindings);
  EXPECT_EQ(left_out, 8 - shown);
  EXPECT_NE(out.str().find(
                fmt::format("{} more findings: listed under \"more findings\" below", left_out)),
            std::string::npos)
      << out.str();
  // Each shown one names its lock (first use, with the pid: two processes), keeps its site's
  // file:line, and gives its advice's start.
  EXPECT_NE(out.str().find("mutex first taken at serve_requests_0"), std::string::npos)
      << out.str();
  std::string unwrapped = out.str();  // a field's continuation lines joined to its first
  for (size_t at; (at = unwrapped.find("\n         ")) != std::string::npos;)
    unwrapped.replace(at, 10, " ");
  EXPECT_NE(unwrapped.find("…/request_handler.cpp:80 in pid 4000 and mutex first taken at "
                           "serve_requests_1"),
            std::string::npos)
      << unwrapped;
  EXPECT_NE(out.str().find("request_handler.cpp:83"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("do    move the work out of the critical section"), std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("   facts 1.00s at stake (serial-bottleneck, warning); figure 0 of"),
            std::string::npos)
      << out.str();
  // The verdict: its title and figures, but not the share its title already says.
  EXPECT_EQ(lines[2], "verdict: lock waits are 26.4 % of thread time: locks are a bottleneck");
  EXPECT_EQ(lines[3], "         61.4ms waiting for locks");
  EXPECT_EQ(out.str().find("\n         26.4 %\n"), std::string::npos) << out.str();

  // The rest, after the first screen, numbered on.
  std::ostringstream more;
  write_more_findings(views, findings, left_out, more);
  EXPECT_EQ(more.str().rfind(fmt::format("*** more findings: {} ***\n", left_out), 0), 0u)
      << more.str();
  EXPECT_NE(more.str().find("8. finding 7:"), std::string::npos) << more.str();
  for (const std::string& line : lines_of(more.str()))
    EXPECT_LE(display_width(line), kFirstScreenWidth) << line;
}

// Five short findings fit whole; --brief's last line says where the others are.
TEST(FindingsText, FiveShortFindingsFitAndBriefSaysWhereTheRestAre) {
  const Profile profile = profile_with_locks(8);
  const ProfileViews views(profile);
  std::vector<Finding> findings = {verdict()};
  for (size_t i = 0; i < 6; ++i) {
    Finding finding;
    finding.rule = "hot-lock";
    finding.title = fmt::format("short finding {}", i);
    finding.locks = {{0, i}};
    finding.sites = {code_location("take", "t.c", 10 + int(i))};
    finding.evidence = {{"count", 1, "1,000,000 acquisitions"}};
    finding.advice = "batch the work";
    finding.time_at_stake_ns = 1000 - i;
    findings.push_back(finding);
  }
  std::ostringstream out;
  EXPECT_EQ(write_first_screen(views, findings, "heading", true, out), 1u);
  const std::string text = out.str();
  for (size_t i = 0; i < 5; ++i)
    EXPECT_NE(text.find(fmt::format("{}. short finding {}", i + 1, i)), std::string::npos) << text;
  EXPECT_EQ(text.find("short finding 5"), std::string::npos) << text;
  EXPECT_NE(text.find("1 more finding: the report without --brief lists them\n"), std::string::npos)
      << text;
  // One finding's block, as a person reads it.
  EXPECT_NE(
      text.find("1. short finding 0\n"
                "   lock  mutex first taken at serve_requests_0 …/tree/request_handler.cpp:80\n"
                "   at    take t.c:10\n"
                "   facts 1.00µs at stake (hot-lock, warning); 1,000,000 acquisitions\n"
                "   do    batch the work\n"),
      std::string::npos)
      << text;
}

// Only the verdict: the screen says no rule found more, rather than ending on nothing.
TEST(FindingsText, OnlyTheVerdictSaysNoOtherFinding) {
  const Profile profile = profile_with_locks(1);
  const ProfileViews views(profile);
  std::ostringstream out;
  EXPECT_EQ(write_first_screen(views, {verdict()}, "heading", false, out), 0u);
  EXPECT_NE(out.str().find("\nno finding beyond the verdict ("), std::string::npos) << out.str();
}

}  // namespace
}  // namespace lockscope
