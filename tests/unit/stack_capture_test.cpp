// The runtime's stack capture, in this process: the frame-pointer walk's checks on chains built by
// hand, the executable-range table, and captures from a signal handler and a thread-exit
// destructor. (stack_capture_fixture_test.cpp checks whole stacks of fixture programs.)
#include "runtime/stack_capture.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

#include <cstdint>
#include <string>

#include "analysis/symbolizer.h"
#include "runtime/executable_ranges.h"
#include "stack_capture_fixture/module_address.h"

namespace lockscope::runtime {
namespace {

constexpr uint32_t kMaxFrames = 64;

// The function (the one that physically contains the code, not an inlined callee) whose call
// returns to `return_address`.
std::string function_returned_to(uintptr_t return_address) {
  static Symbolizer symbolizer;
  const auto where = stack_capture_testing::module_address(return_address);
  if (where.module.empty()) return "<no module>";
  const SymbolizedAddress symbolized =
      symbolizer.symbolize({where.module, ""}, where.elf_vaddr - 1);
  if (symbolized.frames.empty() || symbolized.frames.back().function.empty())
    return symbolized.symbol;
  return symbolized.frames.back().function;
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

bool any_frame_in(const uintptr_t* frames, uint32_t depth, const std::string& function) {
  for (uint32_t i = 0; i < depth; ++i)
    if (starts_with(function_returned_to(frames[i]), function)) return true;
  return false;
}

class StackCapture : public ::testing::Test {
 protected:
  void SetUp() override { init_stack_capture(); }
};

// A return address the table knows: inside this file's code.
__attribute__((noinline)) int code_marker(int x) {
  return x * 7 + 1;
}
uintptr_t code_address(int offset) {
  return reinterpret_cast<uintptr_t>(&code_marker) + offset;
}

// A fake stack of frame records (saved frame pointer, return address), 16-byte aligned.
struct HandBuiltStack {
  alignas(16) uintptr_t words[64] = {};
  uintptr_t at(int word) const { return reinterpret_cast<uintptr_t>(&words[word]); }
  uintptr_t top() const { return at(64); }
  void record(int word, uintptr_t next_frame, uintptr_t return_address) {
    words[word] = next_frame;
    words[word + 1] = return_address;
  }
  // Three records at words 0, 4 and 8, the last one the outermost.
  HandBuiltStack() {
    record(0, at(4), code_address(1));
    record(4, at(8), code_address(2));
    record(8, 0, code_address(3));
  }
};

// The outermost frame (its saved frame pointer null) returns into libc, as a thread function
// returns into start_thread.
TEST_F(StackCapture, WholeHandBuiltChainEndsAtNullFramePointer) {
  HandBuiltStack stack;
  const auto libc_function = reinterpret_cast<uintptr_t>(dlsym(RTLD_DEFAULT, "getpid"));
  ASSERT_NE(libc_function, 0u);
  stack.record(8, 0, libc_function + 4);
  uintptr_t frames[kMaxFrames];
  const FrameChainWalk walk = walk_frame_chain(stack.at(0), stack.top(), frames, kMaxFrames);
  EXPECT_EQ(walk.end, FrameChainEnd::kNullFramePointer);
  ASSERT_EQ(walk.depth, 3u);
  EXPECT_EQ(frames[0], code_address(1));
  EXPECT_EQ(frames[1], code_address(2));
  EXPECT_EQ(frames[2], libc_function + 4);
}

// A null saved frame pointer in a frame that does not return into libc is code built without
// frame pointers that never set the register (a new thread's is 0): the chain is broken, so that
// kAuto redoes it with DWARF (before, a one-frame stack was taken for a whole one).
TEST_F(StackCapture, NullFramePointerOutsideLibcIsABrokenChain) {
  HandBuiltStack stack;
  uintptr_t frames[kMaxFrames];
  const FrameChainWalk walk = walk_frame_chain(stack.at(0), stack.top(), frames, kMaxFrames);
  EXPECT_EQ(walk.end, FrameChainEnd::kBroken);
  EXPECT_EQ(walk.depth, 3u);
}

TEST_F(StackCapture, FramePointerWalkStopsAtEachFailedCheck) {
  uintptr_t frames[kMaxFrames];
  struct Case {
    const char* what;
    void (*corrupt)(HandBuiltStack&);
    uint32_t depth;
  };
  const Case cases[] = {
      {"next frame below", [](HandBuiltStack& s) { s.words[4] = s.at(0); }, 2},
      {"next frame equal", [](HandBuiltStack& s) { s.words[4] = s.at(4); }, 2},
      {"next frame 8-byte aligned only", [](HandBuiltStack& s) { s.words[4] = s.at(9); }, 2},
      {"next frame at the stack top", [](HandBuiltStack& s) { s.words[4] = s.top(); }, 2},
      {"return address in data", [](HandBuiltStack& s) { s.words[5] = s.at(0); }, 1},
      {"return address in no module", [](HandBuiltStack& s) { s.words[5] = 0x10; }, 1},
  };
  for (const Case& c : cases) {
    HandBuiltStack stack;
    c.corrupt(stack);
    const FrameChainWalk walk = walk_frame_chain(stack.at(0), stack.top(), frames, kMaxFrames);
    EXPECT_EQ(walk.end, FrameChainEnd::kBroken) << c.what;
    EXPECT_EQ(walk.depth, c.depth) << c.what;
  }
}

TEST_F(StackCapture, FramePointerWalkDoesNotFollowAStepOfAMegabyte) {
  HandBuiltStack stack;
  // Never read: the walk refuses the step before it.
  stack.words[4] = stack.at(4) + (uintptr_t{1} << 20);
  uintptr_t frames[kMaxFrames];
  const FrameChainWalk walk =
      walk_frame_chain(stack.at(0), stack.at(4) + (uintptr_t{4} << 20), frames, kMaxFrames);
  EXPECT_EQ(walk.end, FrameChainEnd::kBroken);
  EXPECT_EQ(walk.depth, 2u);
}

TEST_F(StackCapture, FramePointerWalkEndsWithoutFailureAtZeroReturnAddressOrFullBuffer) {
  uintptr_t frames[kMaxFrames];
  HandBuiltStack stack;
  stack.words[5] = 0;
  FrameChainWalk walk = walk_frame_chain(stack.at(0), stack.top(), frames, kMaxFrames);
  EXPECT_EQ(walk.end, FrameChainEnd::kNullFramePointer);
  EXPECT_EQ(walk.depth, 1u);

  HandBuiltStack whole;
  walk = walk_frame_chain(whole.at(0), whole.top(), frames, 2);
  EXPECT_EQ(walk.end, FrameChainEnd::kFramesFull);
  EXPECT_EQ(walk.depth, 2u);
}

TEST_F(StackCapture, FramePointerWalkWithoutStackBoundsTrustsOnlyTheFirstRecord) {
  HandBuiltStack stack;
  uintptr_t frames[kMaxFrames];
  const FrameChainWalk walk = walk_frame_chain(stack.at(0), 0, frames, kMaxFrames);
  EXPECT_EQ(walk.end, FrameChainEnd::kNoStackBounds);
  EXPECT_EQ(walk.depth, 1u);
}

TEST_F(StackCapture, ChainThatReturnsIntoLibcAndThenBreaksIsComplete) {
  const auto libc_function = reinterpret_cast<uintptr_t>(dlsym(RTLD_DEFAULT, "getpid"));
  ASSERT_NE(libc_function, 0u);
  HandBuiltStack stack;
  stack.record(4, 1, libc_function + 4);  // main's record on glibc 2.36: saved frame pointer 1
  uintptr_t frames[kMaxFrames];
  FrameChainWalk walk = walk_frame_chain(stack.at(0), stack.top(), frames, kMaxFrames);
  EXPECT_EQ(walk.end, FrameChainEnd::kEnteredLibc);
  EXPECT_EQ(walk.depth, 2u);
  // The same break after a return address into the program is not.
  stack.record(4, 1, code_address(2));
  walk = walk_frame_chain(stack.at(0), stack.top(), frames, kMaxFrames);
  EXPECT_EQ(walk.end, FrameChainEnd::kBroken);
}

int g_data_word = 5;

TEST_F(StackCapture, ExecutableRangesHoldCodeOnly) {
  const ExecutableRanges& ranges = executable_ranges();
  int stack_word = 0;
  EXPECT_GT(ranges.range_count(), 3u);  // this program, libc, ld.so, the vDSO at least
  EXPECT_TRUE(ranges.contains(code_address(0)));
  EXPECT_TRUE(ranges.contains(reinterpret_cast<uintptr_t>(dlsym(RTLD_DEFAULT, "getpid"))));
  EXPECT_FALSE(ranges.contains(reinterpret_cast<uintptr_t>(&g_data_word)));
  EXPECT_FALSE(ranges.contains(reinterpret_cast<uintptr_t>(&stack_word)));
  EXPECT_FALSE(ranges.contains(0));
  const auto getpid_address = reinterpret_cast<uintptr_t>(dlsym(RTLD_DEFAULT, "getpid"));
  EXPECT_LE(ranges.libc_begin(), getpid_address);
  EXPECT_GT(ranges.libc_end(), getpid_address);
}

TEST_F(StackCapture, RefreshSeesCodeLoadedAndUnloadedSinceStartUp) {
  void* library = dlopen(SYMBOLIZER_FIXTURE_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  const auto entry = reinterpret_cast<uintptr_t>(dlsym(library, "exported_entry"));
  ASSERT_NE(entry, 0u);
  refresh_stack_capture_modules();
  EXPECT_TRUE(executable_ranges().contains(entry));
  dlclose(library);
  refresh_stack_capture_modules();
  EXPECT_FALSE(executable_ranges().contains(entry));
}

TEST_F(StackCapture, UnwinderInUseIsLibgccsWhenLoaded) {
  // gtest links libstdc++, which needs libgcc_s: it is loaded here.
  EXPECT_EQ(unwinder_for(UnwindMode::kDwarf), Unwinder::kDwarf);
  EXPECT_EQ(unwinder_for(UnwindMode::kAuto), Unwinder::kFramePointerThenDwarf);
  EXPECT_EQ(unwinder_for(UnwindMode::kFramePointer), Unwinder::kFramePointer);
  EXPECT_STREQ(unwinder_name(Unwinder::kDwarf), "dwarf");
}

__attribute__((noinline)) uint32_t capture_in_named_function(uintptr_t* frames, UnwindMode mode) {
  const uint32_t depth = capture_stack(frames, kMaxFrames, mode);
  __asm__ volatile("" ::: "memory");  // not a tail call
  return depth;
}

TEST_F(StackCapture, FirstFrameIsInTheCallerOfCaptureStackInEveryMode) {
  for (UnwindMode mode : {UnwindMode::kFramePointer, UnwindMode::kDwarf, UnwindMode::kAuto}) {
    uintptr_t frames[kMaxFrames];
    const uint32_t depth = capture_in_named_function(frames, mode);
    ASSERT_GE(depth, 1u);
    EXPECT_TRUE(starts_with(function_returned_to(frames[0]),
                            "lockscope::runtime::(anonymous namespace)::capture_in_named_function"))
        << function_returned_to(frames[0]);
  }
  uintptr_t frames[kMaxFrames];
  EXPECT_EQ(capture_stack(frames, 0, UnwindMode::kDwarf), 0u);
}

uintptr_t g_signal_frames[3][kMaxFrames];
uint32_t g_signal_depth[3];

void capture_in_signal_handler(int) {
  const UnwindMode modes[] = {UnwindMode::kFramePointer, UnwindMode::kDwarf, UnwindMode::kAuto};
  for (int i = 0; i < 3; ++i)
    g_signal_depth[i] = capture_stack(g_signal_frames[i], kMaxFrames, modes[i]);
}

__attribute__((noinline)) void raise_signal_in_named_function() {
  raise(SIGUSR1);
  __asm__ volatile("" ::: "memory");
}

TEST_F(StackCapture, CapturesFromASignalHandlerThroughTheSignalFrame) {
  struct sigaction action = {}, previous = {};
  action.sa_handler = capture_in_signal_handler;
  ASSERT_EQ(sigaction(SIGUSR1, &action, &previous), 0);
  raise_signal_in_named_function();
  sigaction(SIGUSR1, &previous, nullptr);
  for (int i = 0; i < 3; ++i) {
    ASSERT_GE(g_signal_depth[i], 1u) << i;
    EXPECT_TRUE(starts_with(function_returned_to(g_signal_frames[i][0]),
                            "lockscope::runtime::(anonymous namespace)::capture_in_signal_handler"))
        << i;
  }
  // DWARF, and kAuto because this file has no frame pointers, unwind through the signal frame.
  EXPECT_TRUE(
      any_frame_in(g_signal_frames[1], g_signal_depth[1],
                   "lockscope::runtime::(anonymous namespace)::raise_signal_in_named_function"));
  EXPECT_TRUE(
      any_frame_in(g_signal_frames[2], g_signal_depth[2],
                   "lockscope::runtime::(anonymous namespace)::raise_signal_in_named_function"));
}

uintptr_t g_exit_frames[kMaxFrames];
uint32_t g_exit_depth;

void capture_in_thread_exit_destructor(void*) {
  g_exit_depth = capture_stack(g_exit_frames, kMaxFrames, UnwindMode::kAuto);
}

TEST_F(StackCapture, CapturesFromAThreadExitDestructor) {
  pthread_key_t key;
  ASSERT_EQ(pthread_key_create(&key, capture_in_thread_exit_destructor), 0);
  pthread_t thread;
  ASSERT_EQ(pthread_create(
                &thread, nullptr,
                [](void* k) -> void* {
                  pthread_setspecific(*static_cast<pthread_key_t*>(k), k);
                  return nullptr;
                },
                &key),
            0);
  pthread_join(thread, nullptr);
  pthread_key_delete(key);
  // The destructor, then glibc's thread-exit code (no frame pointers: DWARF takes over).
  ASSERT_GE(g_exit_depth, 2u);
  EXPECT_TRUE(
      starts_with(function_returned_to(g_exit_frames[0]),
                  "lockscope::runtime::(anonymous namespace)::capture_in_thread_exit_destructor"))
      << function_returned_to(g_exit_frames[0]);
}

}  // namespace
}  // namespace lockscope::runtime
