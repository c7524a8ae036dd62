// Fills every CodeLocation of a Profile (call sites, init sites) with function, file:line, inline
// chain and a never-empty label, using one Symbolizer (one open per module) for all processes.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "analysis/code_labels.h"  // short_function_name, is_system_file, for callers of old
#include "analysis/profile_model.h"

namespace lockscope {
// Called as symbolization goes: `done` of `total` code locations, every few hundred and once at
// the end (done == total), so that a front end can show a progress line.
using SymbolizeProgress = std::function<void(size_t done, size_t total)>;
void symbolize_profile(Profile& profile, const SymbolizeProgress& progress = {});
// The same through the caller's Symbolizer, which keeps each module it opened (and its DWARF
// index) for the next profile: the runs of a repeated set name the same modules.
class Symbolizer;
void symbolize_profile(Profile& profile, Symbolizer& symbolizer,
                       const SymbolizeProgress& progress = {});
}  // namespace lockscope
