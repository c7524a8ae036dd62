// Contended waits attributed to the first frame of their call stack outside the program's lock
// wrappers (`--caller-depth N`, `--skip-frames REGEX`). Code that wraps its locks (a `MutexLock`
// RAII class, `with_lock(fn)`, git's `obj_read_lock()`) has every wait at one line inside the
// wrapper, so the call-site table names the wrapper; the captured stacks name the callers.
//
// A stack's frames are read innermost first, starting at the call site, each inlined function a
// frame of its own (as the symbolizer found them: the physical frame, then its `inlined_from`).
// The rule skips `caller_depth` frames, then every further frame whose function name (demangled,
// without its parameter list: what the report prints before file:line) matches `skip_frames`
// anywhere (std::regex_search, ECMAScript); a frame without any symbol is matched by its label.
// The file is not matched, so a pattern naming a wrapper does not catch its callers' file too. A
// stack with no frame left is attributed to its outermost frame.
//
// Waits whose stack was not captured (the capture budget, --stack-depth 0) stay at their call
// site, counted apart, so that the rows and those add up to the lock's contended acquisitions.
#pragma once

#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "analysis/profile_model.h"

namespace lockscope {

struct WaitAttributionRule {
  size_t caller_depth = 0;  // frames skipped first (0: start at the call site)
  std::string skip_frames;  // the pattern as given; "" skips no frame by name
  std::regex skip;          // skip_frames, compiled
};

// The rule, or nullopt with `error` saying why `skip_frames` is not a valid ECMAScript regex.
std::optional<WaitAttributionRule> make_wait_attribution_rule(size_t caller_depth,
                                                              const std::string& skip_frames,
                                                              std::string& error);

// Waits attributed to one frame: `frame` is a logical frame (an inlined function's has the
// module and offset of the frame it was inlined into, and its own function, file, line, label).
struct AttributedWaits {
  CodeLocation frame;
  uint64_t waits = 0;
  uint64_t wait_ns = 0;
};

struct WaitAttribution {
  std::vector<AttributedWaits> frames;  // by frame label; most wait first, then most waits
  uint64_t without_stack_waits = 0;  // contended waits with no captured stack: at their call site
  uint64_t without_stack_wait_ns = 0;
  uint64_t contended() const;  // the rows' waits plus those: the sites' contended acquisitions
};

// `sites`: a lock's call sites (or an rwlock side's). Counts the waits the lock's `contended`
// counts: acquire and wait operations, not a condvar's re-acquires or wake-ups.
WaitAttribution attribute_waits(const ProcessProfile& process,
                                const std::vector<SiteSummary>& sites,
                                const WaitAttributionRule& rule);

// One stack's frames innermost first, inlined functions expanded (see above).
std::vector<CodeLocation> logical_frames(const std::vector<CodeLocation>& stack);
// The inverse, for formats that keep inlined functions inside their physical frame (pprof's
// Location lines): `logical` innermost first, as logical_frames gives it, cut back into physical
// frames, each its logical frames innermost first. A physical frame's logical frames end at the
// one with no `inlined_from` left (the function the others were inlined into), so the cut is exact
// even where one address repeats (recursion).
std::vector<std::vector<CodeLocation>> physical_frame_groups(
    const std::vector<CodeLocation>& logical);
// The frame of `frames` the rule attributes a wait to; `frames` must not be empty.
const CodeLocation& attributed_frame(const std::vector<CodeLocation>& frames,
                                     const WaitAttributionRule& rule);

// Whether --skip-frames named anything: of the captured stacks of every process's contended waits
// (the stacks attribute_waits reads), how many have a frame it matches. None says the pattern names
// no function of the program (a typo, a wrapper inlined away or named otherwise), so every wait
// stays at the frame --caller-depth gives, its innermost by default: worth saying, as the rows
// look the same as a pattern that matched.
struct SkipFramesMatches {
  size_t stacks = 0;   // distinct stacks of contended waits, over the processes
  size_t matched = 0;  // those with a frame the pattern matches
};
SkipFramesMatches skip_frames_matches(const Profile& profile, const WaitAttributionRule& rule);

}  // namespace lockscope
