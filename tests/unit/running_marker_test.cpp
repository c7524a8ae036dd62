#include "common/running_marker.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace lockscope::format {
namespace {

bool parse(const std::string& text, ProcessStat& stat) {
  return parse_process_stat(text.data(), text.size(), stat);
}

TEST(RunningMarker, ParsesStateParentThreadsAndStartTime) {
  // A real line (kernel 6.x), 52 fields.
  const std::string line =
      "12097 (pe) Z 1 12096 31352 0 -1 4227148 90 0 0 0 0 0 0 0 20 0 2 0 1825734 0 0 "
      "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
  ProcessStat stat;
  ASSERT_TRUE(parse(line, stat));
  EXPECT_EQ(stat.state, 'Z');
  EXPECT_EQ(stat.ppid, 1u);
  EXPECT_EQ(stat.threads, 2u);
  EXPECT_EQ(stat.start_ticks, 1825734u);
  EXPECT_FALSE(stat.ended()) << "a zombie main thread with another thread still running";
  stat.threads = 1;
  EXPECT_TRUE(stat.ended()) << "the last thread gone: it only waits to be collected";
}

TEST(RunningMarker, CommandNamesWithSpacesAndParenthesesDoNotShiftTheFields) {
  const std::string line = "7 (a) b (c) S 3 7 7 0 -1 0 0 0 0 0 0 0 0 0 -2 -5 1 0 99 0 0\n";
  ProcessStat stat;
  ASSERT_TRUE(parse(line, stat));
  EXPECT_EQ(stat.state, 'S');
  EXPECT_EQ(stat.ppid, 3u);
  EXPECT_EQ(stat.start_ticks, 99u);
  EXPECT_FALSE(stat.ended());
}

TEST(RunningMarker, TruncatedOrMalformedLinesAreRejected) {
  ProcessStat stat;
  EXPECT_FALSE(parse("", stat));
  EXPECT_FALSE(parse("7 (name S 3 7", stat));
  EXPECT_FALSE(parse("7 (name) S 3 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0", stat));
  EXPECT_FALSE(parse("7 (name) S x 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5", stat));
}

TEST(RunningMarker, NamesRoundTrip) {
  char path[128];
  ASSERT_TRUE(running_marker_path(path, sizeof(path), "/tmp/prof", 4321, 1825734));
  EXPECT_STREQ(path, "/tmp/prof/.4321-1825734.running");
  uint32_t pid = 0;
  uint64_t start = 0;
  ASSERT_TRUE(parse_running_marker_name(path + 10, std::strlen(path + 10), pid, start));
  EXPECT_EQ(pid, 4321u);
  EXPECT_EQ(start, 1825734u);
}

TEST(RunningMarker, OtherFilesOfTheDirectoryAreNotMarkers) {
  uint32_t pid = 0;
  uint64_t start = 0;
  for (const std::string name :
       {"4321-1700000000000000000.lsprof", ".4321-1700000000000000000.tmp", ".4321-17.snapshot.tmp",
        ".lockscope-write-test", ".4321-.running", ".-5.running", ".0-5.running",
        ".4321-5.running.tmp", ".4321-5x.running", ".99999999999-5.running"})
    EXPECT_FALSE(parse_running_marker_name(name.data(), name.size(), pid, start)) << name;
}

TEST(RunningMarker, APathThatDoesNotFitIsRefused) {
  char exact[27], short_by_one[26];  // "/tmp/.4321-1825734.running" is 26 characters
  EXPECT_TRUE(running_marker_path(exact, sizeof(exact), "/tmp", 4321, 1825734));
  EXPECT_STREQ(exact, "/tmp/.4321-1825734.running");
  EXPECT_FALSE(running_marker_path(short_by_one, sizeof(short_by_one), "/tmp", 4321, 1825734));
  char tiny[8];
  EXPECT_FALSE(running_marker_path(tiny, sizeof(tiny), "/tmp", 4321, 1825734));
}

}  // namespace
}  // namespace lockscope::format
