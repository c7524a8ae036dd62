#include "report/location_text.h"

#include <fmt/format.h>

#include <string_view>

namespace lockscope {
namespace {

// "ns::take w.c:12" -> "ns::take": a label's function, without its " file:line".
std::string_view function_of(std::string_view label) {
  const size_t space = label.rfind(' ');
  return space == std::string_view::npos ? label : label.substr(0, space);
}

}  // namespace

std::string location_text(const CodeLocation& where) {
  std::string text = where.label;
  const std::string_view own = function_of(where.label);
  for (const std::string& outer : where.inlined_from)
    if (function_of(outer) != own) {
      text += " (inlined into " + outer + ")";
      break;
    }
  return text;
}

std::vector<std::string> stack_frame_lines(const CodeLocation& frame) {
  if (frame.label.empty()) return {fmt::format("0x{:x}", frame.offset)};
  if (frame.inlined_from.empty()) return {frame.label};
  std::vector<std::string> lines{frame.label + " (inlined)"};
  for (size_t i = 0; i < frame.inlined_from.size(); ++i)
    lines.push_back(frame.inlined_from[i] +
                    (i + 1 < frame.inlined_from.size() ? " (inlined)" : ""));
  return lines;
}

}  // namespace lockscope
