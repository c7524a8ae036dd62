// Hyperfine-style text for every scenario, and the JSON pieces they share.
//
// A case prints a header, `mean ± σ` with its runs and outliers, `min … median … max`, then
// scenario extras; a group of cases ends with a relative summary ("1.42 ± 0.03× faster than
// pthread"). Numbers go through format_figure() so the text stays aligned whatever their magnitude.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "bench/sample_stats.h"

namespace lockscope::lab {

// 3 significant-ish digits with a SI suffix: 1234567 → "1.23 M", 0.5 → "0.500".
std::string format_figure(double value);
// A spread (σ) in the unit prefix of the figure it belongs to: "98.5 k ± 0.4 k", not "98.5 k ±
// 383.0".
std::string format_spread(double spread, double reference);

void print_case_header(std::ostream& out, std::string_view title);
// "  <label> (mean ± σ):  1.23 M ± 4.56 k  <unit>   [runs: 10, outliers: 1]" + the range line.
void print_summary_lines(std::ostream& out, std::string_view label, std::string_view unit,
                         const stats::SampleSummary& summary);

struct NamedSummary {
  std::string name;
  stats::SampleSummary summary;
};
// Ranks the cases (highest mean first when higher_is_better) and prints how the best compares to
// each. Returns the text lines' data for JSON: [{name, ratio, uncertainty}] relative to the best.
nlohmann::json print_relative_summary(std::ostream& out, std::string_view what,
                                      std::vector<NamedSummary> cases, bool higher_is_better);

nlohmann::json to_json(const stats::SampleSummary& summary);

}  // namespace lockscope::lab
