// Lock time by call stack, the one view behind every stack format (collapsed, speedscope, pprof,
// and the flame-graph writer to come): each process's lock waits, or lock holds, as weighted
// stacks that add up exactly to the report's totals.
//
// What is counted is the report's "lock wait" (the processes table's LOCK WAIT): mutexes and
// rwlocks, not spinning, condition, semaphore or barrier waits, which are waits for something
// else than a lock and are never summed with it.
//   - wait: every acquire's waits (timed-out ones too) and a mutex's re-acquisitions after its
//     condition waits. The waits whose stack was captured weigh on that stack (it starts at the
//     call site); the rest (over the capture budget, --stack-depth 0) on the call site alone.
//     Over a process the stacks add up to its locks' wait totals.
//   - hold: every acquire site's hold total (an estimate where holds were sampled). The timed holds
//     whose stack was captured weigh on the stack they were released from (it starts at the
//     release's call site, where the hold ended); the rest on the acquire site alone. Over a
//     process the stacks add up to its locks' hold totals.
// A frame is a logical frame (wait_attribution.h's logical_frames: an inlined function is a frame
// of its own). Stacks are listed outermost frame first, as flame graphs draw them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/lock_kinds.h"  // is_lock_wait_primitive: what is counted
#include "analysis/profile_model.h"

namespace lockscope {

enum class StackWeight { kWait, kHold };
// "wait", "hold"; and back (false for anything else).
std::string stack_weight_name(StackWeight weight);
bool parse_stack_weight(const std::string& name, StackWeight& weight);

struct WeightedStack {
  const LockSummary* lock = nullptr;
  format::Operation operation = format::Operation::kLock;  // the call site's
  std::vector<CodeLocation> frames;  // outermost first; the last is the call site
  bool captured = false;             // a captured stack, not only the call site
  uint64_t count = 0;                // waits, or timed holds
  uint64_t weight_ns = 0;            // > 0
};

// The frame the flame graphs (collapsed, speedscope, HTML) put between the process and a stack
// that was not captured (over the capture budget, --stack-depth 0): it stands on its call site
// alone, and a reader should not take that for a stack that began there. pprof labels such a
// sample instead (stack: not captured).
inline constexpr const char* kStackNotCapturedFrame = "(stack not captured)";

// The process's stacks for `weight`, in the order of its locks and their sites.
std::vector<WeightedStack> weighted_stacks(const ProcessProfile& process, StackWeight weight);
// What they add up to: the process's lock wait total, or its lock hold total.
uint64_t lock_time_total(const ProcessProfile& process, StackWeight weight);

// The lock as a leaf frame names it, by its kind and name (lock_names.h): "mutex account_a",
// "rwlock 0x5610#2 (read)", "mutex worker w.c:40 0x5620" (a name other locks share: with the
// address), "mutex cache_lock (after cond wait)" for the re-acquisitions inside
// pthread_cond_wait. A lock not symbolized (a hand-made profile) is named by its address.
std::string lock_frame_name(const LockSummary& lock, format::Operation operation);
// The process as a root frame names it: "pid 4908 (git)".
std::string process_frame_name(const ProcessProfile& process);

}  // namespace lockscope
