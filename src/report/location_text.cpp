#include "report/location_text.h"

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

}  // namespace lockscope
