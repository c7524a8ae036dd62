// What one stack capture costs (src/runtime/stack_capture.h): ns per captured stack of 10 frames,
// walked by frame pointer, by libgcc's DWARF unwinder, and by kAuto on a chain with frame pointers
// (it stays on them) and on one without (it walks them, finds the chain broken, redoes it with
// DWARF). The capture is the runtime's own code, compiled with the runtime's flags.
//
// The frames captured are those of `descend`, a recursion deeper than the capture limit, so every
// walk stops at exactly kFrames frames (the "frames" counter says so); this file is built with
// frame pointers, `descend_without_frame_pointers` is not.
//
//   build/bin/lockscope_stack_capture_bench --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <cstdint>

#include "runtime/stack_capture.h"

namespace {

using lockscope::runtime::capture_stack;
using lockscope::runtime::UnwindMode;

constexpr uint32_t kFrames = 10;
constexpr int kRecursion = 14;

void capture_loop(benchmark::State& state, UnwindMode mode) {
  uintptr_t frames[kFrames];
  uint64_t captured = 0;
  for (auto _ : state) {
    captured += capture_stack(frames, kFrames, mode);
    benchmark::DoNotOptimize(frames);
  }
  state.counters["frames"] =
      benchmark::Counter(static_cast<double>(captured), benchmark::Counter::kAvgIterations);
}

__attribute__((noinline)) int descend(int levels, benchmark::State& state, UnwindMode mode) {
  if (levels == 0)
    capture_loop(state, mode);
  else
    benchmark::DoNotOptimize(descend(levels - 1, state, mode));
  return levels;
}

// Code without frame pointers that uses the register for data, as such code does under register
// pressure: here it holds an odd number across the call, which no frame-pointer check accepts.
// (Code that leaves the register alone is worse: the walk silently skips it; see stack_capture.h.)
__attribute__((noinline, optimize("omit-frame-pointer"))) int descend_without_frame_pointers(
    int levels, benchmark::State& state, UnwindMode mode) {
  register uintptr_t data asm("rbp") = static_cast<uintptr_t>(levels) * 16 + 1;
  __asm__ volatile("" : "+r"(data));
  if (levels == 0)
    capture_loop(state, mode);
  else
    benchmark::DoNotOptimize(descend_without_frame_pointers(levels - 1, state, mode));
  __asm__ volatile("" : "+r"(data));
  return static_cast<int>(data >> 4);
}

void frame_pointer_capture(benchmark::State& state) {
  descend(kRecursion, state, UnwindMode::kFramePointer);
}
BENCHMARK(frame_pointer_capture);

void dwarf_capture(benchmark::State& state) {
  descend(kRecursion, state, UnwindMode::kDwarf);
}
BENCHMARK(dwarf_capture);

void auto_capture_with_frame_pointers(benchmark::State& state) {
  descend(kRecursion, state, UnwindMode::kAuto);
}
BENCHMARK(auto_capture_with_frame_pointers);

void auto_capture_without_frame_pointers(benchmark::State& state) {
  descend_without_frame_pointers(kRecursion, state, UnwindMode::kAuto);
}
BENCHMARK(auto_capture_without_frame_pointers);

}  // namespace

int main(int argc, char** argv) {
  lockscope::runtime::init_stack_capture();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
