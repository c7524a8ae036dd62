// Human units for durations and counts, chosen per value ("812ns", "3.4µs", "12.5ms", "2.03s") so
// a column never shows 0 for something that happened or 12345678 for something a reader must parse.
#pragma once

#include <cstdint>
#include <string>

namespace lockscope {

std::string format_duration_ns(double ns);
std::string format_count(uint64_t count);  // thousands separated: 1,234,567
// A share (0..1) as a percentage with one decimal, "61.2 %"; "<0.1 %" for a share that is not 0
// but would print as 0.0.
std::string format_share(double share);

}  // namespace lockscope
