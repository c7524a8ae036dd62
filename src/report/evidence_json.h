// A finding's evidence as JSON (the json and sarif writers): an array of {key, value, text}, in
// the finding's order. An array, not an object by key: a finding may cite one figure per lock or
// per edge under one key (false-sharing's two "acquisitions", an inversion's "edge"s).
#pragma once

#include <cmath>
#include <string_view>
#include <vector>

#include "analysis/diagnosis/finding.h"
#include "report/json_writer.h"

namespace lockscope {

inline void evidence_array(JsonWriter& w, std::string_view name,
                           const std::vector<Evidence>& evidence) {
  constexpr double kExactInteger = 9007199254740992.0;  // 2^53: every integer below is a double
  w.array(name);
  for (const Evidence& item : evidence) {
    w.begin_object().field("key", item.key);
    // A whole number (nanoseconds, counts) as a JSON integer, a ratio with its fraction.
    const double value = item.value;
    if (std::isfinite(value) && std::floor(value) == value && std::fabs(value) < kExactInteger)
      w.field("value", static_cast<int64_t>(value));
    else
      w.field("value", value);
    w.field("text", item.text).end_object();
  }
  w.end_array();
}

}  // namespace lockscope
