// The text report as a whole (make_text_report_writer, report/report_writer.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "code_locations.h"
#include "report/report_writer.h"
#include "report/text_table.h"

namespace lockscope {
namespace {

// A program that took no lock: the locks table says so, rather than a header over nothing.
TEST(TextReport, NoLockTakenSaysSoInsteadOfAnEmptyTable) {
  Profile profile;
  profile.processes.emplace_back();
  profile.processes[0].pid = 7;
  profile.processes[0].executable = "/bin/true";
  std::ostringstream out;
  make_text_report_writer()->write(profile, ReportOptions{}, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("*** locks present: none (the program took no lock while profiled) ***"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("0 of 0"), std::string::npos) << text;
}

// Two mutexes made by one loop (one name), one contended from a deep source path, in one process.
Profile named_locks_profile() {
  Profile profile;
  profile.directory = "prof";
  ProcessProfile process;
  process.pid = 77;
  process.duration_ns = 1'000'000'000;
  ThreadSummary thread;
  thread.tid = 77;
  thread.acquisitions = thread.releases = 30;
  thread.contended = 3;
  thread.wait_sum_ns = 5'000'000;
  process.threads.push_back(thread);
  for (uint64_t address : {0x7f0000001040ull, 0x7f0000002040ull}) {
    LockSummary lock;
    lock.address = address;
    lock.name = "make_table /home/builder/a/very/long/path/to/the/source/of/table.cpp:12";
    lock.name_source = LockNameSource::kInitSite;
    lock.same_name_locks = 2;
    SiteSummary take;
    take.operation = format::Operation::kLock;
    take.location =
        code_location("take", "/home/builder/a/very/long/path/to/the/source/of/take.cpp", 30);
    take.count = 15;
    take.contended = address == 0x7f0000001040ull ? 3 : 0;
    take.wait_sum_ns = address == 0x7f0000001040ull ? 5'000'000 : 0;
    lock.sites.push_back(take);
    SiteSummary release;
    release.operation = format::Operation::kUnlock;
    release.location = code_location("take", "t.cpp", 31);
    release.count = 15;
    lock.sites.push_back(release);
    lock.finish();
    process.locks.push_back(lock);
  }
  profile.processes.push_back(process);
  return profile;
}

std::string report_of(const Profile& profile, const ReportOptions& options) {
  std::ostringstream out;
  make_text_report_writer()->write(profile, options, out);
  return out.str();
}

size_t widest(const std::string& text) {
  size_t widest = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) widest = std::max(widest, display_width(line));
  return widest;
}

// By default the locks are named, locks sharing a name told apart by the address's last digits,
// every line within 120 columns, and no legend; --addresses names them by pid/address, --wide
// shows every column, --legend ends with the columns' meanings, --brief stops after the first
// screen.
TEST(TextReport, LocksByNameWithinTheWidthAndTheFlagsThatShowMore) {
  const Profile profile = named_locks_profile();
  const std::string text = report_of(profile, ReportOptions{});
  const size_t table = text.find("*** locks present: 2 of 2");
  EXPECT_NE(text.find("\nmake_table …/path/to/the/source/of/table.cpp:12 @…1040  ", table),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nmake_table …/path/to/the/source/of/table.cpp:12 @…2040  ", table),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("77/0x7f0000001040"), std::string::npos) << text;
  EXPECT_EQ(text.find("legend:"), std::string::npos) << text;
  EXPECT_EQ(text.find("HANDOFFS"), std::string::npos) << text;
  EXPECT_LE(widest(text), kReportWidth) << text;
  // The contended lock's release site is listed; the other's (it made no one wait) only with --all.
  EXPECT_NE(text.find("  U          15                                                         "
                      "take t.cpp:31\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("take t.cpp:31", text.find("@…2040  mutex  acquired")), std::string::npos)
      << text;

  ReportOptions addresses;
  addresses.addresses = true;
  EXPECT_NE(report_of(profile, addresses).find("\n77/0x7f0000001040  mutex"), std::string::npos);

  ReportOptions wide;
  wide.wide = true;
  wide.legend = true;
  const std::string all_columns = report_of(profile, wide);
  for (const char* header :
       {"HANDOFFS", "CROSS-CPU", "≤1µs", "WAIT P99", "±95%", "HOLD MAX", "INIT SITE", "RELEASED"})
    EXPECT_NE(all_columns.find(header), std::string::npos) << header << "\n" << all_columns;
  EXPECT_NE(all_columns.find("\nlegend:\n  LOCK        its name"), std::string::npos)
      << all_columns;

  ReportOptions brief;
  brief.brief = true;
  const std::string first_screen = report_of(profile, brief);
  EXPECT_EQ(first_screen.rfind("lockscope report of prof: 1 process, 1 thread\n\nverdict: ", 0), 0u)
      << first_screen;
  EXPECT_EQ(first_screen.find("***"), std::string::npos) << first_screen;
  EXPECT_LE(widest(first_screen), 80u) << first_screen;
}

}  // namespace
}  // namespace lockscope
