#include "analysis/wait_attribution.h"

#include <algorithm>
#include <map>
#include <set>

#include "analysis/profile_symbolization.h"

namespace lockscope {
namespace {

// An inlined frame as the symbolizer wrote it into `inlined_from`: "function file:line" (the
// function may contain spaces, "std::map<int, int>::at"; a file rarely does).
CodeLocation inlined_frame(const CodeLocation& physical, size_t index) {
  CodeLocation frame;
  frame.module = physical.module;
  frame.offset = physical.offset;
  frame.label = physical.inlined_from[index];
  frame.inlined_from.assign(physical.inlined_from.begin() + static_cast<long>(index) + 1,
                            physical.inlined_from.end());
  const size_t space = frame.label.rfind(' ');
  const size_t colon = frame.label.rfind(':');
  if (space == std::string::npos || colon == std::string::npos || colon < space) {
    frame.function = frame.label;
    return frame;
  }
  frame.function = frame.label.substr(0, space);
  frame.file = frame.label.substr(space + 1, colon - space - 1);
  frame.line = std::atoi(frame.label.c_str() + colon + 1);
  return frame;
}

bool skipped_by_name(const CodeLocation& frame, const WaitAttributionRule& rule) {
  if (rule.skip_frames.empty()) return false;
  const std::string name =
      frame.function.empty() ? frame.label : short_function_name(frame.function);
  return std::regex_search(name, rule.skip);
}

}  // namespace

std::optional<WaitAttributionRule> make_wait_attribution_rule(size_t caller_depth,
                                                              const std::string& skip_frames,
                                                              std::string& error) {
  WaitAttributionRule rule;
  rule.caller_depth = caller_depth;
  rule.skip_frames = skip_frames;
  try {
    if (!skip_frames.empty()) rule.skip = std::regex(skip_frames, std::regex::ECMAScript);
  } catch (const std::regex_error& bad) {
    error = bad.what();
    return std::nullopt;
  }
  return rule;
}

uint64_t WaitAttribution::contended() const {
  uint64_t sum = without_stack_waits;
  for (const AttributedWaits& row : frames) sum += row.waits;
  return sum;
}

std::vector<CodeLocation> logical_frames(const std::vector<CodeLocation>& stack) {
  std::vector<CodeLocation> frames;
  for (const CodeLocation& physical : stack) {
    frames.push_back(physical);
    for (size_t i = 0; i < physical.inlined_from.size(); ++i)
      frames.push_back(inlined_frame(physical, i));
  }
  return frames;
}

std::vector<std::vector<CodeLocation>> physical_frame_groups(
    const std::vector<CodeLocation>& logical) {
  std::vector<std::vector<CodeLocation>> groups;
  bool open = false;
  for (const CodeLocation& frame : logical) {
    if (!open) groups.emplace_back();
    groups.back().push_back(frame);
    open = !frame.inlined_from.empty();
  }
  return groups;
}

const CodeLocation& attributed_frame(const std::vector<CodeLocation>& frames,
                                     const WaitAttributionRule& rule) {
  size_t at = rule.caller_depth;
  while (at < frames.size() && skipped_by_name(frames[at], rule)) ++at;
  return frames[std::min(at, frames.size() - 1)];
}

SkipFramesMatches skip_frames_matches(const Profile& profile, const WaitAttributionRule& rule) {
  SkipFramesMatches matches;
  if (rule.skip_frames.empty()) return matches;
  for (const ProcessProfile& process : profile.processes) {
    std::set<size_t> seen;
    for (const LockSummary& lock : process.locks)
      for (const SiteSummary& site : lock.sites) {
        if (!counts_as_acquisition(site.operation) || site.contended == 0) continue;
        for (const SiteStack& stack : site.stacks) {
          if (stack.stack >= process.stacks.size() || process.stacks[stack.stack].empty() ||
              !seen.insert(stack.stack).second)
            continue;
          ++matches.stacks;
          const std::vector<CodeLocation> frames = logical_frames(process.stacks[stack.stack]);
          if (std::any_of(frames.begin(), frames.end(), [&rule](const CodeLocation& frame) {
                return skipped_by_name(frame, rule);
              }))
            ++matches.matched;
        }
      }
  }
  return matches;
}

WaitAttribution attribute_waits(const ProcessProfile& process,
                                const std::vector<SiteSummary>& sites,
                                const WaitAttributionRule& rule) {
  WaitAttribution out;
  std::map<size_t, size_t> row_of_stack;  // stack index -> index into out.frames
  std::map<std::string, size_t> row_of_label;
  for (const SiteSummary& site : sites) {
    if (!counts_as_acquisition(site.operation) || site.contended == 0) continue;
    uint64_t captured = 0, captured_ns = 0;
    for (const SiteStack& stack : site.stacks) {
      if (stack.stack >= process.stacks.size() || process.stacks[stack.stack].empty()) continue;
      auto [known, added] = row_of_stack.try_emplace(stack.stack, 0);
      if (added) {
        const CodeLocation frame =
            attributed_frame(logical_frames(process.stacks[stack.stack]), rule);
        auto [row, new_label] = row_of_label.try_emplace(frame.label, out.frames.size());
        if (new_label) out.frames.push_back(AttributedWaits{frame, 0, 0});
        known->second = row->second;
      }
      out.frames[known->second].waits += stack.waits;
      out.frames[known->second].wait_ns += stack.wait_ns;
      captured += stack.waits;
      captured_ns += stack.wait_ns;
    }
    out.without_stack_waits += site.contended - std::min(site.contended, captured);
    out.without_stack_wait_ns += site.wait_sum_ns - std::min(site.wait_sum_ns, captured_ns);
  }
  std::stable_sort(out.frames.begin(), out.frames.end(),
                   [](const AttributedWaits& a, const AttributedWaits& b) {
                     if (a.wait_ns != b.wait_ns) return a.wait_ns > b.wait_ns;
                     return a.waits > b.waits;
                   });
  return out;
}

}  // namespace lockscope
