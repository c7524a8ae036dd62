// Lock wait by call stack across two sets of runs: what `lockscope diff -f html` draws as a
// differential flame graph. Each run's stacks are weighted_stacks.h's (kWait: they add up to the
// run's lock wait), and a stack is matched across runs and builds by the names of its frames, as
// run_metrics.h matches locks and sites, never by address:
//   - the process by its executable's name ("git", "git#2": run_metrics.h's process_names);
//   - a stack that was not captured by kStackNotCapturedFrame under it, as the report's graphs;
//   - each frame by function and file:line ("take diff_knobs.c:41", the file's base name: a
//     rebuild in another directory keeps it); a frame without a line keeps its label (module and
//     offset: the same build only);
//   - the lock, the leaf, by its kind and name ("mutex table_lock", "... (read)", "... (after cond
//     wait)"), without the address or generation that lock_frame_name adds: the locks of a process
//     that share a name are one leaf, as they are one lock in run_metrics.
// A side's weight of a stack is the median over its runs of that stack's wait in each run, a run
// without the stack counting 0. Medians do not add up: a node of the tree weighs the medians of
// the stacks through it added up, and the root need not equal the median of the runs' totals,
// which `base_total` and `changed_total` give (the diff's program wait).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/compare/run_metrics.h"
#include "analysis/profile_model.h"

namespace lockscope::compare {

enum class StackFrameKind : uint8_t {
  kProgram,      // the root above the processes, when the runs have more than one
  kProcess,      // a process, by its executable's name
  kNotCaptured,  // kStackNotCapturedFrame: the stack was not captured, only its call site
  kCode,         // a frame of the call stack, outermost first
  kLock,         // the lock waited for: the leaf
};
// "program", "process", "not-captured", "code", "lock": as the html page's data names them.
const char* stack_frame_kind_name(StackFrameKind kind);

// One stack, matched across the runs of both sides.
struct StackChange {
  std::vector<std::string> frames;  // the process, [not captured], code frames, the lock
  std::vector<double> base_ns;      // its wait in each base run (0: not in that run)
  std::vector<double> changed_ns;   // ... in each new run
  double base_median_ns = 0;        // median of base_ns
  double changed_median_ns = 0;     // median of changed_ns
  bool captured = true;             // false: under kStackNotCapturedFrame
};

// A node of the differential tree: a frame reached by one path from the root.
struct StackDiffNode {
  std::string name;
  StackFrameKind kind = StackFrameKind::kCode;
  double base_ns = 0;                 // the base medians of the stacks through this node, added up
  double changed_ns = 0;              // the new medians, added up
  std::vector<std::size_t> children;  // into StackDiff::nodes, sorted by name
  double delta_ns() const { return changed_ns - base_ns; }
};

struct StackDiff {
  std::size_t base_runs = 0;
  std::size_t changed_runs = 0;
  std::vector<StackChange> stacks;   // sorted by frames
  std::vector<StackDiffNode> nodes;  // the tree, nodes[0] its root; empty without runs
  // Each run's lock wait (its stacks added up: lock_time_total over its processes), over the runs
  // of a side: median [min–max].
  Spread base_total;
  Spread changed_total;
};

// The stacks of both sets of runs (profiles symbolized, so that frames have lines and locks names).
StackDiff stack_diff(const std::vector<const Profile*>& base,
                     const std::vector<const Profile*>& changed);

}  // namespace lockscope::compare
