// Modules a dlclose() unloaded, kept for the profile's module map (unloaded_modules.cpp).
#pragma once

#include "runtime/module_map.h"

namespace lockscope::runtime {

// Appends the unloaded modules after those `list` holds (up to its capacity). Needs no lock: the
// list only grows, and publishes each entry before counting it.
void append_unloaded_modules(ModuleList& list);

}  // namespace lockscope::runtime
