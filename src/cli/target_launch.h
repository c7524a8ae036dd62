// Runs the target with the runtime preloaded and waits for it, like `time`: SIGINT and SIGQUIT
// reach the target (the terminal sends them to the whole process group) while lockscope ignores
// them, so an interrupted program still gets its report. Then waits for the profiled descendants
// still running (running_descendants.h), without ever having been their parent.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/runtime_config.h"

namespace lockscope {

struct LaunchSettings {
  std::string executable;              // resolved path
  std::vector<std::string> arguments;  // argv, [0] as the user typed it
  std::string runtime_library;         // liblockscope.so
  std::string profile_directory;
  // The defaults are the runtime's own (runtime_config.h).
  unsigned hold_sample_period = config::kDefaultHoldSamplePeriod;
  uint64_t snapshot_interval_ms = config::kDefaultSnapshotMs;         // 0: none
  unsigned stack_depth = config::kDefaultStackDepth;                  // 0: no stacks
  std::string unwind = config::kUnwindNames[config::kDefaultUnwind];  // fp | dwarf | auto
  bool all_stacks = false;                          // --stacks all: a stack for every acquisition
  bool trace = false;                               // record --trace
  uint64_t trace_size = config::kDefaultTraceSize;  // bytes per thread file
  bool trace_ring = false;                          // --trace-full ring
  uint64_t min_wait_ns = config::kDefaultMinWaitNs;
};

struct TargetOutcome {
  bool signaled = false;
  int exit_status = 0;       // when !signaled
  int signal = 0;            // when signaled
  bool not_started = false;  // the program could not be run (said already): 126 or 127
};

TargetOutcome launch_target(const LaunchSettings& settings);

// Ends lockscope the way the target ended: its exit status, or the same signal re-raised.
[[noreturn]] void exit_like(const TargetOutcome& outcome);

// liblockscope.so next to this executable: <prefix>/bin/lockscope -> <prefix>/lib/liblockscope.so.
std::string runtime_library_path();

}  // namespace lockscope
