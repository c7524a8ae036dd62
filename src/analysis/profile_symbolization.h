// Fills every CodeLocation of a Profile (call sites, init sites) with function, file:line, inline
// chain and a never-empty label, using one Symbolizer (one open per module) for all processes.
#pragma once

#include "analysis/profile_model.h"

namespace lockscope {
void symbolize_profile(Profile& profile);
}
