// `lockscope bench all`: a short pass over every scenario (c2c first, so the mutex report can use
// its bound), ending with the key figures bench/results/ keeps. Tuned to finish in well under a
// minute on a 2-core machine.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

namespace lockscope::lab {

struct AllOptions {
  double scale = 1.0;  // multiplies durations and iteration counts; the lab tests use a tiny scale
};

// Returns {"c2c": …, "mutex": …, "condvar": …, "storm": …, "pi": …, "key_figures": …}.
nlohmann::json run_all_scenarios(const AllOptions& options, std::ostream& out);

// The key figures, extracted from the sections above (also unit-testable on canned JSON).
nlohmann::json key_figures(const nlohmann::json& scenarios);
void print_key_figures(const nlohmann::json& figures, std::ostream& out);

}  // namespace lockscope::lab
