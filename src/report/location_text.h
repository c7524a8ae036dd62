// How the text report names a code location: its label ("take w.c:12"), then the function it was
// inlined into, "(inlined into worker w.c:40)". A location inlined into a frame of its own function
// (recursion inlined, a partial-inlining clone) names the first outer frame of another function
// instead, or none: never "take w.c:12 (inlined into take w.c:15)".
#pragma once

#include <string>

#include "analysis/profile_model.h"

namespace lockscope {

std::string location_text(const CodeLocation& where);

}  // namespace lockscope
