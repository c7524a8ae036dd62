// Whole stacks captured by the fixture program (stack_capture_fixture/wrapper_chain.cpp), built
// -O2 with and without frame pointers: every level, main included, named by the symbolizer and at
// the line of its call, as each unwind mode sees it.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/symbolizer.h"
#include "symbolizer_fixture/llvm_symbolizer_oracle.h"

namespace lockscope {
namespace {

struct FixtureFrame {
  uint64_t elf_vaddr = 0;
  std::string module;
};

struct FixtureCapture {
  std::string unwinder;
  std::string chain_end;
  std::vector<FixtureFrame> frames;
};

// mode ("fp", "dwarf", "auto") -> what the fixture captured.
std::map<std::string, FixtureCapture> run_fixture(const std::string& binary) {
  std::map<std::string, FixtureCapture> captures;
  std::istringstream lines(symbolizer_oracle::run_command("'" + binary + "'"));
  std::string line;
  FixtureCapture* current = nullptr;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string kind;
    fields >> kind;
    if (kind == "capture") {
      std::string mode, word;
      fields >> mode;
      current = &captures[mode];
      fields >> word >> current->unwinder;
      // "frame-pointer, dwarf when broken" is never what a capture used: one word suffices.
      fields >> word >> current->chain_end;
    } else if (kind == "frame" && current) {
      FixtureFrame frame;
      fields >> std::hex >> frame.elf_vaddr >> std::dec >> frame.module;
      current->frames.push_back(frame);
    }
  }
  return captures;
}

// callee -> line of the fixture source that calls it ("// calls: <callee>").
std::map<std::string, int> call_lines() {
  std::map<std::string, int> lines;
  std::ifstream source(STACK_CAPTURE_FIXTURE_SOURCE);
  std::string line;
  for (int number = 1; std::getline(source, line); ++number) {
    const size_t marker = line.find("// calls: ");
    if (marker != std::string::npos) lines[line.substr(marker + 10)] = number;
  }
  return lines;
}

struct Level {
  const char* function;  // the function the frame returns into
  const char* callee;    // what it called from there
};
// frames[0] onwards, as the fixture calls them.
constexpr Level kLevels[] = {{"capture_here", "capture_stack"},
                             {"wrapper_level_three", "capture_here"},
                             {"wrapper_level_two", "wrapper_level_three"},
                             {"wrapper_level_one", "wrapper_level_two"},
                             {"main", "wrapper_level_one"}};

// Each level at its place, in its function, at the line of its call.
void expect_every_level(const FixtureCapture& capture) {
  ASSERT_GE(capture.frames.size(), std::size(kLevels)) << "unwinder " << capture.unwinder;
  const std::map<std::string, int> lines = call_lines();
  Symbolizer symbolizer;
  for (size_t i = 0; i < std::size(kLevels); ++i) {
    const FixtureFrame& frame = capture.frames[i];
    const SymbolizedAddress where = symbolizer.symbolize({frame.module, ""}, frame.elf_vaddr - 1);
    ASSERT_FALSE(where.frames.empty()) << "frame " << i;
    const std::string& function = where.frames.back().function;
    EXPECT_EQ(function.substr(0, function.find('(')), kLevels[i].function) << "frame " << i;
    EXPECT_EQ(symbolizer_oracle::base_name(where.frames.front().file), "wrapper_chain.cpp")
        << "frame " << i;
    EXPECT_EQ(where.frames.front().line, lines.at(kLevels[i].callee)) << "frame " << i;
  }
}

TEST(StackCaptureFixture, CallLinesAreMarkedInTheFixtureSource) {
  const std::map<std::string, int> lines = call_lines();
  for (const Level& level : kLevels) EXPECT_EQ(lines.count(level.callee), 1u) << level.callee;
}

TEST(StackCaptureFixture, DwarfSeesEveryLevelWithoutFramePointers) {
  const auto captures = run_fixture(STACK_CAPTURE_FIXTURE_OMIT_FP);
  ASSERT_EQ(captures.count("dwarf"), 1u);
  EXPECT_EQ(captures.at("dwarf").unwinder, "dwarf");
  expect_every_level(captures.at("dwarf"));
}

TEST(StackCaptureFixture, AutoRedoesABrokenChainWithDwarf) {
  const auto captures = run_fixture(STACK_CAPTURE_FIXTURE_OMIT_FP);
  ASSERT_EQ(captures.count("auto"), 1u);
  const FixtureCapture& capture = captures.at("auto");
  EXPECT_EQ(capture.unwinder, "dwarf");
  EXPECT_NE(capture.chain_end, "entered-libc");
  EXPECT_NE(capture.chain_end, "frames-full");
  expect_every_level(capture);
}

TEST(StackCaptureFixture, FramePointerWalkWithoutFramePointersKeepsItsFirstFrame) {
  const auto captures = run_fixture(STACK_CAPTURE_FIXTURE_OMIT_FP);
  ASSERT_EQ(captures.count("fp"), 1u);
  const FixtureCapture& capture = captures.at("fp");
  EXPECT_EQ(capture.unwinder, "frame-pointer");
  ASSERT_GE(capture.frames.size(), 1u);
  // capture_stack()'s own frame record is always good, so frames[0] is right; what follows is not
  // trusted and the chain says so.
  EXPECT_EQ(capture.frames[0].elf_vaddr, captures.at("dwarf").frames.at(0).elf_vaddr);
  EXPECT_TRUE(capture.chain_end == "broken" || capture.frames.size() < 2) << capture.chain_end;
}

TEST(StackCaptureFixture, FramePointerWalkReachesMainWithFramePointers) {
  const auto captures = run_fixture(STACK_CAPTURE_FIXTURE_WITH_FP);
  ASSERT_EQ(captures.count("fp"), 1u);
  const FixtureCapture& capture = captures.at("fp");
  EXPECT_EQ(capture.unwinder, "frame-pointer");
  // main returns into libc, whose frames keep no frame pointer: the chain's proper end.
  EXPECT_EQ(capture.chain_end, "entered-libc");
  expect_every_level(capture);
}

TEST(StackCaptureFixture, AutoKeepsAWholeFramePointerChain) {
  const auto captures = run_fixture(STACK_CAPTURE_FIXTURE_WITH_FP);
  ASSERT_EQ(captures.count("auto"), 1u);
  EXPECT_EQ(captures.at("auto").unwinder, "frame-pointer");
  expect_every_level(captures.at("auto"));
  // The same return addresses as DWARF's, as far as the frame pointers go.
  const FixtureCapture& dwarf = captures.at("dwarf");
  expect_every_level(dwarf);
  for (size_t i = 0; i < captures.at("auto").frames.size(); ++i)
    EXPECT_EQ(captures.at("auto").frames[i].elf_vaddr, dwarf.frames.at(i).elf_vaddr) << i;
}

}  // namespace
}  // namespace lockscope
