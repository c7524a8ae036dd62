#include "analysis/compare/stack_diff.h"

#include <fmt/core.h>

#include <filesystem>
#include <map>

#include "analysis/lock_names.h"
#include "analysis/profile_symbolization.h"
#include "analysis/weighted_stacks.h"

namespace lockscope::compare {
namespace {

// "take diff_knobs.c:41": what stays when the program is rebuilt, in another directory too.
std::string frame_name(const CodeLocation& frame) {
  if (frame.line <= 0 || frame.file.empty()) return frame.label;
  const std::string file = std::filesystem::path(frame.file).filename().string();
  const std::string function = frame.function.empty() ? "?" : short_function_name(frame.function);
  return fmt::format("{} {}:{}", function, file, frame.line);
}

// lock_frame_name without what differs between runs (the address, the generation).
std::string lock_leaf_name(const LockSummary& lock, format::Operation operation) {
  std::string name = fmt::format("{} {}", lock_kind_name(lock), lock_name(lock));
  if (operation == format::Operation::kCondReacquire)
    name += " (after cond wait)";
  else if (lock.primitive == format::Primitive::kRwLock && format::is_read_side(operation))
    name += " (read)";
  else if (lock.primitive == format::Primitive::kRwLock && format::is_write_side(operation))
    name += " (write)";
  return name;
}

struct StackRuns {
  std::vector<double> base, changed;
  bool captured = true;
};
using StackTable = std::map<std::vector<std::string>, StackRuns>;

// Adds each stack's wait in run `run` of one side; returns the run's lock wait.
double add_run(const Profile& profile, std::size_t run, bool base, std::size_t base_runs,
               std::size_t changed_runs, StackTable& table) {
  const std::vector<std::string> processes = process_names(profile);
  double total = 0;
  for (std::size_t p = 0; p < profile.processes.size(); ++p) {
    for (const WeightedStack& stack : weighted_stacks(profile.processes[p], StackWeight::kWait)) {
      std::vector<std::string> frames = {processes[p]};
      if (!stack.captured) frames.emplace_back(kStackNotCapturedFrame);
      for (const CodeLocation& frame : stack.frames) frames.push_back(frame_name(frame));
      frames.push_back(lock_leaf_name(*stack.lock, stack.operation));
      auto [at, added] = table.try_emplace(std::move(frames));
      if (added) {
        at->second.base.assign(base_runs, 0.0);
        at->second.changed.assign(changed_runs, 0.0);
        at->second.captured = stack.captured;
      }
      // Several stacks of a run may meet in one name (locks that share it, their generations).
      (base ? at->second.base : at->second.changed)[run] += static_cast<double>(stack.weight_ns);
      total += static_cast<double>(stack.weight_ns);
    }
  }
  return total;
}

StackFrameKind kind_of(const StackChange& stack, std::size_t depth) {
  if (depth == 0) return StackFrameKind::kProcess;
  if (depth + 1 == stack.frames.size()) return StackFrameKind::kLock;
  if (depth == 1 && !stack.captured) return StackFrameKind::kNotCaptured;
  return StackFrameKind::kCode;
}

// The tree of the stacks: one node per distinct path from the root, each weighing the medians of
// the stacks through it. Above the processes a root of its own when there are several.
std::vector<StackDiffNode> tree_of(const std::vector<StackChange>& stacks) {
  std::vector<StackDiffNode> nodes;
  if (stacks.empty()) return nodes;
  const bool one_process = stacks.front().frames.front() == stacks.back().frames.front();
  nodes.push_back({.name = one_process ? stacks.front().frames.front() : "every process",
                   .kind = one_process ? StackFrameKind::kProcess : StackFrameKind::kProgram,
                   .base_ns = 0,
                   .changed_ns = 0,
                   .children = {}});
  std::vector<std::map<std::string, std::size_t>> children(1);  // by name, per node
  for (const StackChange& stack : stacks) {
    std::size_t at = 0;
    nodes[0].base_ns += stack.base_median_ns;
    nodes[0].changed_ns += stack.changed_median_ns;
    for (std::size_t depth = one_process ? 1 : 0; depth < stack.frames.size(); ++depth) {
      const auto [child, added] = children[at].try_emplace(stack.frames[depth], nodes.size());
      at = child->second;
      if (added) {
        nodes.push_back({.name = stack.frames[depth],
                         .kind = kind_of(stack, depth),
                         .base_ns = 0,
                         .changed_ns = 0,
                         .children = {}});
        children.emplace_back();
      }
      nodes[at].base_ns += stack.base_median_ns;
      nodes[at].changed_ns += stack.changed_median_ns;
    }
  }
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (const auto& [name, child] : children[i]) nodes[i].children.push_back(child);
  return nodes;
}

}  // namespace

const char* stack_frame_kind_name(StackFrameKind kind) {
  switch (kind) {
    case StackFrameKind::kProgram:
      return "program";
    case StackFrameKind::kProcess:
      return "process";
    case StackFrameKind::kNotCaptured:
      return "not-captured";
    case StackFrameKind::kLock:
      return "lock";
    case StackFrameKind::kCode:
      break;
  }
  return "code";
}

StackDiff stack_diff(const std::vector<const Profile*>& base,
                     const std::vector<const Profile*>& changed) {
  StackDiff diff;
  diff.base_runs = base.size();
  diff.changed_runs = changed.size();
  StackTable table;
  std::vector<double> base_totals, changed_totals;
  for (std::size_t run = 0; run < base.size(); ++run)
    base_totals.push_back(add_run(*base[run], run, true, base.size(), changed.size(), table));
  for (std::size_t run = 0; run < changed.size(); ++run)
    changed_totals.push_back(
        add_run(*changed[run], run, false, base.size(), changed.size(), table));
  diff.base_total = spread_of(base_totals);
  diff.changed_total = spread_of(changed_totals);
  for (auto& [frames, runs] : table) {
    StackChange stack;
    stack.frames = frames;
    stack.captured = runs.captured;
    // A side without runs weighs nothing (spread_of gives NaN for no values).
    stack.base_median_ns = runs.base.empty() ? 0 : spread_of(runs.base).median;
    stack.changed_median_ns = runs.changed.empty() ? 0 : spread_of(runs.changed).median;
    stack.base_ns = std::move(runs.base);
    stack.changed_ns = std::move(runs.changed);
    diff.stacks.push_back(std::move(stack));
  }
  diff.nodes = tree_of(diff.stacks);
  return diff;
}

}  // namespace lockscope::compare
