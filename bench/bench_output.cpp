#include "bench/bench_output.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>

namespace lockscope::lab {

std::string format_figure(double value) {
  const double magnitude = std::abs(value);
  if (magnitude >= 1e9) return fmt::format("{:.2f} G", value / 1e9);
  if (magnitude >= 1e6) return fmt::format("{:.2f} M", value / 1e6);
  if (magnitude >= 1e4) return fmt::format("{:.1f} k", value / 1e3);
  if (magnitude >= 100) return fmt::format("{:.1f}", value);
  if (magnitude >= 1) return fmt::format("{:.2f}", value);
  return fmt::format("{:.3f}", value);
}

std::string format_spread(double spread, double reference) {
  const double magnitude = std::abs(reference);
  if (magnitude >= 1e9) return fmt::format("{:.2f} G", spread / 1e9);
  if (magnitude >= 1e6) return fmt::format("{:.2f} M", spread / 1e6);
  if (magnitude >= 1e4) return fmt::format("{:.1f} k", spread / 1e3);
  return format_figure(spread);
}

void print_case_header(std::ostream& out, std::string_view title) {
  fmt::print(out, "\n{}\n", title);
}

void print_summary_lines(std::ostream& out, std::string_view label, std::string_view unit,
                         const stats::SampleSummary& s) {
  const std::string mean_label = fmt::format("{} (mean ± σ):", label);
  fmt::print(out, "  {:<30} {:>9} ± {:<9} {:<10} [runs: {}, outliers: {}]\n", mean_label,
             format_figure(s.mean), format_spread(s.stddev, s.mean), unit, s.count, s.outliers);
  fmt::print(out, "  {:<30} {:>9} … {} … {} {}\n",
             "Range (min … median … max):", format_figure(s.min), format_figure(s.median),
             format_figure(s.max), unit);
}

nlohmann::json print_relative_summary(std::ostream& out, std::string_view what,
                                      std::vector<NamedSummary> cases, bool higher_is_better) {
  nlohmann::json relative = nlohmann::json::array();
  std::erase_if(cases,
                [](const NamedSummary& c) { return c.summary.count == 0 || c.summary.mean == 0; });
  if (cases.size() < 2) return relative;
  std::sort(cases.begin(), cases.end(), [&](const NamedSummary& a, const NamedSummary& b) {
    return higher_is_better ? a.summary.mean > b.summary.mean : a.summary.mean < b.summary.mean;
  });
  const NamedSummary& best = cases.front();
  fmt::print(out, "\nSummary ({}): {} is fastest\n", what, best.name);
  for (std::size_t i = 1; i < cases.size(); ++i) {
    // "faster than" as a ratio ≥ 1: throughputs best/other, times other/best.
    const stats::RelativeRatio r = higher_is_better
                                       ? stats::relative_ratio(best.summary, cases[i].summary)
                                       : stats::relative_ratio(cases[i].summary, best.summary);
    fmt::print(out, "  {:>8.2f} ± {:.2f}× faster than {}\n", r.ratio, r.uncertainty, cases[i].name);
    relative.push_back({{"best", best.name},
                        {"other", cases[i].name},
                        {"ratio", r.ratio},
                        {"uncertainty", r.uncertainty}});
  }
  return relative;
}

nlohmann::json to_json(const stats::SampleSummary& s) {
  return {{"count", s.count},   {"min", s.min},       {"max", s.max}, {"mean", s.mean},
          {"stddev", s.stddev}, {"median", s.median}, {"p90", s.p90}, {"outliers", s.outliers}};
}

}  // namespace lockscope::lab
