// A symbolized CodeLocation made by hand for the writer and view tests: module 0, offset
// 0x1000 + line (one address per line), and the label as the symbolizer writes it,
// "function file:line".
#pragma once

#include <string>

#include "analysis/profile_model.h"

namespace lockscope {

inline CodeLocation code_location(const std::string& function, const std::string& file, int line) {
  CodeLocation where;
  where.module = 0;
  where.offset = 0x1000 + static_cast<uint64_t>(line);
  where.function = function;
  where.file = file;
  where.line = line;
  where.label = function + " " + file + ":" + std::to_string(line);
  return where;
}

}  // namespace lockscope
