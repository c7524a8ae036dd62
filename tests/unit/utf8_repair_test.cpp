// Strings that are not UTF-8 are repaired byte by byte (\xHH), control characters are escaped,
// valid printable text of any language is left alone, and every string of a profile is reached.
#include "analysis/utf8_repair.h"

#include <gtest/gtest.h>

namespace lockscope {
namespace {

TEST(Utf8Repair, ValidTextIsKeptAsItIs) {
  for (const std::string text :
       {"", "plain ascii, long enough for the eight-byte loop", "café", "日本語のスレッド",
        "emoji 😀 at the end 😀", "~ and \u00a0 (U+00A0)"}) {
    EXPECT_TRUE(is_valid_utf8(text)) << text;
    EXPECT_TRUE(is_clean_text(text)) << text;
    EXPECT_EQ(repair_text(text), text);
  }
}

TEST(Utf8Repair, ControlCharactersAreEscapedSoNoneReachesTheTerminal) {
  // An ESC sequence that would clear the screen and retitle the terminal, in the eight-byte loop
  // and after it; tab and newline (a table row's breakers); DEL; a C1 CSI (U+009B) and NEL.
  EXPECT_EQ(repair_text("thread name \x1b[2J\x1b]0;owned\x07"),
            "thread name \\x1B[2J\\x1B]0;owned\\x07");
  EXPECT_EQ(repair_text("a\tb\nc\rd\x7f"), "a\\x09b\\x0Ac\\x0Dd\\x7F");
  EXPECT_EQ(repair_text("csi \u009b31m nel \u0085 ok é"), "csi \\u009B31m nel \\u0085 ok é");
  EXPECT_EQ(repair_text(std::string("nul\0here", 8)), "nul\\x00here");
  EXPECT_EQ(repair_text("mixed \x1b caf\xe9"), "mixed \\x1B caf\\xE9");
  for (const std::string text : {"\x1b", "12345678\x01", "1234567\x7f", "tab\there", "\u009b"}) {
    EXPECT_TRUE(is_valid_utf8(text)) << text;
    EXPECT_FALSE(is_clean_text(text)) << text;
  }
  // Each position of the eight-byte word, each control byte.
  for (size_t at = 0; at < 16; ++at)
    for (int c : {0x00, 0x01, 0x1f, 0x7f}) {
      std::string text(16, 'x');
      text[at] = static_cast<char>(c);
      EXPECT_FALSE(is_clean_text(text)) << at << " " << c;
      EXPECT_EQ(repair_text(text).size(), 16u + 3u);
    }
}

TEST(Utf8Repair, EachBadByteIsShownAsItsHexValue) {
  EXPECT_EQ(repair_text("caf\xe9"), "caf\\xE9");  // Latin-1
  EXPECT_EQ(repair_text("\xc3"), "\\xC3");        // cut after the lead byte
  EXPECT_EQ(repair_text("thread-name-\xe6\x97"), "thread-name-\\xE6\\x97");  // cut at 15 bytes
  EXPECT_EQ(repair_text("\xc0\xaf"), "\\xC0\\xAF");                          // overlong '/'
  EXPECT_EQ(repair_text("\xed\xa0\x80"), "\\xED\\xA0\\x80");                 // a UTF-16 surrogate
  EXPECT_EQ(repair_text("\xf4\x90\x80\x80"), "\\xF4\\x90\\x80\\x80");        // above U+10FFFF
  EXPECT_EQ(repair_text("\xff\xfe ok é"), "\\xFF\\xFE ok é");                // the rest kept
  for (const std::string text : {"caf\xe9", "\xc3", "\xc0\xaf", "\xed\xa0\x80"})
    EXPECT_FALSE(is_valid_utf8(text));
}

TEST(Utf8Repair, EveryStringOfAProfileIsRepairedAndCounted) {
  Profile profile;
  profile.directory = "dir\xe9";
  profile.problems.push_back({"bad\xe9.lsprof", "truncated"});
  ProcessProfile process;
  process.executable = "/bin/caf\xe9";
  process.arguments = {"caf\xe9", "fine"};
  process.modules.push_back(ModuleSummary{"/lib/\xe9.so", "", 0, 0, 0});
  ThreadSummary thread;
  thread.name = "w\xe9";
  process.threads.push_back(thread);
  LockSummary lock;
  SiteSummary site;
  site.location.function = "f\xe9";
  site.location.label = "f\xe9 x.c:1";
  site.location.inlined_from = {"g\xe9 y.c:2"};
  lock.sites.push_back(site);
  process.locks.push_back(lock);
  process.stacks.push_back({site.location});
  profile.processes.push_back(process);
  repair_profile_strings(profile);
  EXPECT_EQ(profile.repaired_strings, 12u);
  const ProcessProfile& p = profile.processes[0];
  EXPECT_EQ(profile.directory, "dir\\xE9");
  EXPECT_EQ(profile.problems[0].file, "bad\\xE9.lsprof");
  EXPECT_EQ(p.executable, "/bin/caf\\xE9");
  EXPECT_EQ(p.arguments, (std::vector<std::string>{"caf\\xE9", "fine"}));
  EXPECT_EQ(p.modules[0].path, "/lib/\\xE9.so");
  EXPECT_EQ(p.threads[0].name, "w\\xE9");
  EXPECT_EQ(p.locks[0].sites[0].location.label, "f\\xE9 x.c:1");
  EXPECT_EQ(p.locks[0].sites[0].location.inlined_from[0], "g\\xE9 y.c:2");
  EXPECT_EQ(p.stacks[0][0].function, "f\\xE9");
}

}  // namespace
}  // namespace lockscope
