// How a code location's text reads in labels: a function's short name, and whether a file is the
// toolchain's or the system's rather than the program's own. Below both the symbolization that
// makes the labels and the lock names that pick a program frame.
#pragma once

#include <string>

namespace lockscope {
// A demangled name as labels show it: "ns::Class::method(int, std::string const&) const" ->
// "ns::Class::method", "(anonymous namespace)::" left out.
std::string short_function_name(std::string name);
// Toolchain and library headers (/usr/..., .../include/c++/..., gthr-default.h): code that is
// not where the program's own code took a lock.
bool is_system_file(const std::string& file);
}  // namespace lockscope
