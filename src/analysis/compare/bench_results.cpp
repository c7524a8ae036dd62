#include "analysis/compare/bench_results.h"

#include <fmt/core.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace lockscope::compare {
namespace {

using nlohmann::json;

constexpr const char* kBenchSchema = "lockscope-bench/1";

// Each run's value of the figure `name` from the case's "runs" array; no values when the case
// has no such array (a summary only).
BenchFigure figure_from_runs(const json& one_case, std::string_view name) {
  BenchFigure figure{bench_figure_kind(name), {}};
  if (!one_case.contains("runs")) return figure;
  for (const json& run : one_case.at("runs"))
    figure.values.push_back(run.at(std::string(name)).get<double>());
  return figure;
}

BenchCase case_from_runs(const std::string& scenario, const json& one_case, std::string lock,
                         std::string detail, const std::vector<std::string_view>& names) {
  BenchCase result{scenario, std::move(lock), std::move(detail), 0, {}};
  for (std::string_view name : names) result.figures.push_back(figure_from_runs(one_case, name));
  result.runs = one_case.contains("runs") ? one_case.at("runs").size() : 0;
  return result;
}

void read_mutex(const json& section, BenchResults& results) {
  for (const json& one_case : section.at("cases")) {
    const int threads = one_case.at("threads").get<int>();
    std::vector<std::string_view> names = {"iterations_per_ms"};
    if (threads > 1) names.insert(names.end(), {"handoffs_per_s", "fairness_min_over_max"});
    results.cases.push_back(
        case_from_runs("mutex", one_case, one_case.at("lock"),
                       fmt::format("{} thread{}", threads, threads == 1 ? "" : "s"), names));
  }
}

void read_condvar(const json& section, BenchResults& results) {
  results.cases.push_back(case_from_runs("condvar", section, "", "", {"cycles_per_s"}));
  // Whether SCHED_FIFO was in force is part of how it ran, as a parameter is.
  results.parameters["condvar"]["fifo_applied"] = section.at("fifo").at("applied").dump();
}

// c2c keeps each pair's round trips as one array of per-run values, not a "runs" array.
void read_c2c(const json& section, BenchResults& results) {
  for (const json& pair : section.at("pairs")) {
    BenchCase one{
        "c2c",
        "",
        fmt::format("CPU {} ↔ CPU {}", pair.at("cpu_a").get<int>(), pair.at("cpu_b").get<int>()),
        0,
        {{bench_figure_kind("round_trip_ns"), {}}}};
    if (pair.contains("round_trip_ns"))
      one.figures[0].values = pair.at("round_trip_ns").get<std::vector<double>>();
    one.runs = one.figures[0].values.size();
    results.cases.push_back(std::move(one));
  }
}

void read_storm(const json& section, BenchResults& results) {
  for (const auto& [kind, variant] : section.at("variants").items())
    results.cases.push_back(
        case_from_runs("storm", variant, "", kind, {"real_s", "user_s", "sys_s"}));
}

void read_pi(const json& section, BenchResults& results) {
  for (const json& one_case : section.at("cases"))
    results.cases.push_back(
        case_from_runs("pi", one_case, one_case.at("lock"), "", {"high_blocked_ms"}));
}

// The parameters that only choose which cases there are, or how many runs each has.
bool shapes_cases(const std::string& scenario, const std::string& parameter) {
  if (parameter == "runs" || parameter == "locks") return true;
  return scenario == "mutex" && parameter == "threads";
}

void read_scenario(const std::string& scenario, const json& section, BenchResults& results) {
  results.scenarios.push_back(scenario);
  if (section.contains("parameters"))
    for (const auto& [name, value] : section.at("parameters").items())
      if (!shapes_cases(scenario, name)) results.parameters[scenario][name] = value.dump();
  if (section.value("skipped", false)) {
    results.skipped.push_back(fmt::format("{} skipped: {}", scenario,
                                          section.value("reason", std::string("no reason given"))));
    return;
  }
  if (scenario == "mutex")
    read_mutex(section, results);
  else if (scenario == "condvar")
    read_condvar(section, results);
  else if (scenario == "c2c")
    read_c2c(section, results);
  else if (scenario == "storm")
    read_storm(section, results);
  else if (scenario == "pi")
    read_pi(section, results);
  // Anything else (`all`'s key_figures) is a summary of the scenarios above: nothing per run.
}

std::string as_text(const json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

}  // namespace

const std::vector<BenchFigureKind>& bench_figure_kinds() {
  static const std::vector<BenchFigureKind> kinds = {
      {"iterations_per_ms", "/ms", Better::kHigher},
      {"handoffs_per_s", "/s", Better::kHigher},
      {"fairness_min_over_max", "", Better::kHigher},
      {"cycles_per_s", "/s", Better::kHigher},
      {"round_trip_ns", "ns", Better::kLower},
      {"real_s", "s", Better::kLower},
      {"user_s", "s", Better::kLower},
      {"sys_s", "s", Better::kLower},
      {"high_blocked_ms", "ms", Better::kLower},
  };
  return kinds;
}

const BenchFigureKind* bench_figure_kind(std::string_view name) {
  for (const BenchFigureKind& kind : bench_figure_kinds())
    if (kind.name == name) return &kind;
  return nullptr;
}

const BenchFigure* BenchCase::figure(std::string_view name) const {
  for (const BenchFigure& f : figures)
    if (f.kind->name == name) return &f;
  return nullptr;
}

BenchResults parse_bench_results(std::string_view text, const std::string& path) {
  const json document = json::parse(text, nullptr, false);
  if (document.is_discarded())
    throw std::invalid_argument(
        fmt::format("'{}' is not a bench result: not JSON (written by `lockscope bench SCENARIO "
                    "--json FILE`?)",
                    path));
  if (!document.is_object() || !document.contains("schema") || !document["schema"].is_string() ||
      document["schema"].get<std::string>().rfind("lockscope-bench/", 0) != 0)
    throw std::invalid_argument(fmt::format(
        "'{}' is not a bench result: JSON without \"schema\": \"{}\"", path, kBenchSchema));
  if (document["schema"] != kBenchSchema)
    throw std::invalid_argument(fmt::format("'{}' is a {} result; this lockscope reads {}", path,
                                            document["schema"].get<std::string>(), kBenchSchema));
  BenchResults results;
  results.path = path;
  try {
    results.command = document.value("command", std::string());
    for (const auto& [field, value] : document.at("machine").items())
      results.machine[field] = as_text(value);
    for (const auto& [scenario, section] : document.at("scenarios").items())
      read_scenario(scenario, section, results);
  } catch (const json::exception& error) {
    // A lockscope-bench/1 document that lost or changed a field on the way: say which.
    throw std::invalid_argument(
        fmt::format("'{}' is not a well-formed bench result: {}", path, error.what()));
  }
  return results;
}

BenchResults read_bench_results(const std::string& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  if (!file) throw std::invalid_argument(fmt::format("cannot read '{}'", path));
  return parse_bench_results(text.str(), path);
}

}  // namespace lockscope::compare
