// The runtime's configuration as both sides spell it: the environment variable the CLI sets, every
// key of its config string (config_string.h: `key=value,...,dir=PATH`), the values a key takes,
// the limits both check, and the defaults — those of `lockscope record` and those of a runtime
// preloaded without the CLI are the same numbers, from here.
//
// The runtime includes this before the C library is up and links nothing but libc: constexpr
// scalars and string literals only, no std::string, nothing that allocates or runs at start-up.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lockscope::config {

inline constexpr char kVariable[] = "LOCKSCOPE_CONFIG";

// Keys, in the order the CLI writes them; `dir` must come last (it takes the rest of the string).
inline constexpr char kHoldSampleKey[] = "hold_sample";  // N: time 1 in N uncontended holds
inline constexpr char kSnapshotKey[] = "snapshot_ms";    // write a snapshot every N ms (0: none)
inline constexpr char kStackDepthKey[] = "stack_depth";  // frames per stack (0: no stacks)
inline constexpr char kUnwindKey[] = "unwind";           // kUnwindNames
inline constexpr char kStacksKey[] = "stacks";           // kStacksAll, or absent
inline constexpr char kTraceKey[] = "trace";             // 1: also write the trace
inline constexpr char kTraceSizeKey[] = "trace_size";    // bytes per thread's trace file
inline constexpr char kTraceRingKey[] = "trace_ring";    // 1: a full trace file overwrites
inline constexpr char kMinWaitKey[] = "min_wait_ns";     // trace only waits at least this long
inline constexpr char kTscHzKey[] = "tsc_hz";            // the CLI's TSC calibration (0: none)
inline constexpr char kDirectoryKey[] = "dir";           // the profile directory
// Not written by the CLI: log_writes=1 says how long each profile write took (bench/overhead);
// parent= is accepted and ignored (docs/cli.md).
inline constexpr char kLogWritesKey[] = "log_writes";
inline constexpr char kParentKey[] = "parent";

// Directory: relative to the process's working directory (the CLI passes an absolute path).
inline constexpr char kDefaultDirectory[] = "lockscope.prof";

// Hold sampling: a call site's first N uncontended holds are timed, then 1 in N. Two clock reads
// cost ~37 ns on the reference machine (bench/overhead): 1 in 32 keeps that out of the profile.
inline constexpr uint32_t kDefaultHoldSamplePeriod = 32;
inline constexpr uint32_t kMaxHoldSamplePeriod = 1000000;

inline constexpr uint32_t kDefaultStackDepth = 32;
inline constexpr uint32_t kMaxStackDepth = 64;

// unwind=: index = the runtime's UnwindMode (stack_capture.h asserts the order).
inline constexpr const char* kUnwindNames[] = {"fp", "dwarf", "auto"};
inline constexpr uint8_t kDefaultUnwind = 2;  // auto
inline constexpr size_t kUnwindModes = sizeof(kUnwindNames) / sizeof(kUnwindNames[0]);
static_assert(kDefaultUnwind < kUnwindModes);

// --stacks contended (the default: no key written) or all (stacks=all).
inline constexpr char kStacksContended[] = "contended";
inline constexpr char kStacksAll[] = "all";
inline constexpr const char* kDefaultStacks = kStacksContended;

// Trace files: 32-byte events, so the default holds 262,144 of them per thread.
inline constexpr uint64_t kDefaultTraceSize = uint64_t{8} << 20;
inline constexpr uint64_t kMinTraceSize = 4096;
inline constexpr uint64_t kMaxTraceSize = uint64_t{1} << 40;
// --trace-full stop (the default: trace_ring=0) or ring (trace_ring=1).
inline constexpr char kTraceFullStop[] = "stop";
inline constexpr char kTraceFullRing[] = "ring";
inline constexpr const char* kDefaultTraceFull = kTraceFullStop;
inline constexpr uint64_t kDefaultMinWaitNs = 0;  // every event

// Snapshots: none by default; at most one a day apart.
inline constexpr uint64_t kDefaultSnapshotMs = 0;
inline constexpr uint64_t kMinSnapshotMs = 10;
inline constexpr uint64_t kMaxSnapshotMs = 86400000;

}  // namespace lockscope::config
