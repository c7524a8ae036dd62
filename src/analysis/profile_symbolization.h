// Fills every CodeLocation of a Profile (call sites, init sites) with function, file:line, inline
// chain and a never-empty label, using one Symbolizer (one open per module) for all processes.
#pragma once

#include <string>

#include "analysis/profile_model.h"

namespace lockscope {
void symbolize_profile(Profile& profile);
// A demangled name as labels show it: "ns::Class::method(int, std::string const&) const" ->
// "ns::Class::method", "(anonymous namespace)::" left out.
std::string short_function_name(std::string name);
}
