// How the text report names a code location: its label ("take w.c:12"), then the function it was
// inlined into, "(inlined into worker w.c:40)". A location inlined into a frame of its own function
// (recursion inlined, a partial-inlining clone) names the first outer frame of another function
// instead, or none: never "take w.c:12 (inlined into take w.c:15)".
//
// In a stack every function is a line of its own, as perf and gdb print them: an inlined one says
// so, "take w.c:12 (inlined)", and the function it was inlined into follows it ("main" of a
// stack whose frame was run_child inlined into main is no longer missing).
#pragma once

#include <string>
#include <vector>

#include "analysis/profile_model.h"

namespace lockscope {

std::string location_text(const CodeLocation& where);

// One frame of a stack as its lines, innermost first.
std::vector<std::string> stack_frame_lines(const CodeLocation& frame);

}  // namespace lockscope
