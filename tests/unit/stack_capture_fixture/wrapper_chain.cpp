// Stack capture fixture: main -> wrapper_level_one -> wrapper_level_two -> wrapper_level_three ->
// capture_here, which captures the stack once per unwind mode; main then prints the captures.
// Built twice (CMakeLists.txt), -O2 -fomit-frame-pointer and -O2 -fno-omit-frame-pointer, with
// the runtime's stack_capture.cpp compiled as in liblockscope.so. The wrappers are noinline and
// use their callee's result, so none is inlined or tail-called away.
//
// Output, one block per mode (stack_capture_test.cpp parses it):
//   capture <mode> unwinder <name> chain <frame chain end> depth <n>
//   frame <ELF vaddr, hex> <module path>
// Each call line is marked "calls: <callee>": the test expects exactly those lines.
#include <cstdio>

#include "module_address.h"
#include "runtime/stack_capture.h"

using lockscope::runtime::capture_stack_with_outcome;
using lockscope::runtime::FrameChainEnd;
using lockscope::runtime::StackCaptureOutcome;
using lockscope::runtime::UnwindMode;

namespace {

constexpr uint32_t kMaxFrames = 32;
constexpr UnwindMode kModes[] = {UnwindMode::kFramePointer, UnwindMode::kDwarf, UnwindMode::kAuto};
constexpr const char* kModeNames[] = {"fp", "dwarf", "auto"};
uintptr_t g_frames[3][kMaxFrames];
StackCaptureOutcome g_outcomes[3];
volatile int g_sink;

const char* chain_end_name(FrameChainEnd end) {
  switch (end) {
    case FrameChainEnd::kNullFramePointer:
      return "null-frame-pointer";
    case FrameChainEnd::kEnteredLibc:
      return "entered-libc";
    case FrameChainEnd::kFramesFull:
      return "frames-full";
    case FrameChainEnd::kBroken:
      return "broken";
    case FrameChainEnd::kNoStackBounds:
      return "no-stack-bounds";
  }
  return "?";
}

}  // namespace

__attribute__((noinline, noclone)) int capture_here(int value) {
  for (int mode = 0; mode < 3; ++mode) {
    // The marker stays on the call's line, however long.
    // clang-format off
    g_outcomes[mode] = capture_stack_with_outcome(g_frames[mode], kMaxFrames, kModes[mode]);  // calls: capture_stack
    // clang-format on
  }
  g_sink = g_sink + value;
  return value + 1;
}

__attribute__((noinline, noclone)) int wrapper_level_three(int value) {
  const int result = capture_here(value * 5);  // calls: capture_here
  g_sink = g_sink + result;
  return result ^ 3;
}

__attribute__((noinline, noclone)) int wrapper_level_two(int value) {
  const int result = wrapper_level_three(value + 7);  // calls: wrapper_level_three
  g_sink = g_sink + result;
  return result - 2;
}

__attribute__((noinline, noclone)) int wrapper_level_one(int value) {
  const int result = wrapper_level_two(value * 3);  // calls: wrapper_level_two
  g_sink = g_sink + result;
  return result + 4;
}

int main(int argc, char**) {
  lockscope::runtime::init_stack_capture();
  const int result = wrapper_level_one(argc);  // calls: wrapper_level_one
  for (int mode = 0; mode < 3; ++mode) {
    const StackCaptureOutcome& outcome = g_outcomes[mode];
    std::printf("capture %s unwinder %s chain %s depth %u\n", kModeNames[mode],
                lockscope::runtime::unwinder_name(outcome.unwinder),
                chain_end_name(outcome.frame_chain_end), outcome.depth);
    for (uint32_t i = 0; i < outcome.depth; ++i) {
      const auto where = lockscope::stack_capture_testing::module_address(g_frames[mode][i]);
      std::printf("frame %llx %s\n", static_cast<unsigned long long>(where.elf_vaddr),
                  where.module.c_str());
    }
  }
  return result == 0 ? 1 : 0;
}
