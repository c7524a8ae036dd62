#include "bench/all_scenario.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cstdint>

#include "bench/bench_output.h"
#include "bench/c2c_scenario.h"
#include "bench/condvar_scenario.h"
#include "bench/lock_catalog.h"
#include "bench/mutex_scenario.h"
#include "bench/pi_scenario.h"
#include "bench/storm_scenario.h"

namespace lockscope::lab {
namespace {

std::uint64_t scaled(std::uint64_t n, double scale) {
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(static_cast<double>(n) * scale));
}

}  // namespace

nlohmann::json run_all_scenarios(const AllOptions& options, std::ostream& out) {
  const double s = options.scale;
  nlohmann::json scenarios;
  const C2cOptions c2c{.runs = 5, .round_trips = scaled(200'000, s), .max_cpus = 8};
  const C2cMeasurement bound = measure_c2c(c2c);
  scenarios["c2c"] = print_c2c_report(bound, c2c, out);
  MutexOptions mutex;
  mutex.locks = LabLocks::names();
  mutex.threads = {1, 2};
  mutex.duration_s = 0.1 * s;
  mutex.runs = 3;
  mutex.c2c_round_trip_ns = bound.best_round_trip_ns;
  mutex.measure_bound = false;
  scenarios["mutex"] = run_mutex_scenario(mutex, out);
  scenarios["condvar"] = run_condvar_scenario(
      CondvarOptions{.runs = 10, .iterations = scaled(20'000, s), .fifo_priority = 0}, out);
  scenarios["storm"] = run_storm_scenario(StormOptions{.threads = 256,
                                                       .calls = scaled(10'000, s),
                                                       .syscall_name = "getpid",
                                                       .runs = 3,
                                                       .compare_processes = true},
                                          out);
  PiOptions pi;
  pi.runs = 2;
  pi.hold_ms = std::max(1, static_cast<int>(20 * s));
  pi.hog_ms = std::max(2, static_cast<int>(100 * s));
  scenarios["pi"] = run_pi_scenario(pi, out);
  scenarios["key_figures"] = key_figures(scenarios);
  print_key_figures(scenarios["key_figures"], out);
  return scenarios;
}

nlohmann::json key_figures(const nlohmann::json& scenarios) {
  nlohmann::json figures = nlohmann::json::object();
  const nlohmann::json& c2c = scenarios.at("c2c");
  if (c2c.contains("best_round_trip_ns")) {
    figures["c2c_round_trip_ns"] = c2c["best_round_trip_ns"];
    figures["c2c_handoff_bound_per_s"] = c2c["handoff_bound_per_second"];
  }
  const nlohmann::json& best = scenarios.at("mutex").at("best_handoff");
  if (!best.is_null()) figures["best_handoff"] = best;
  // Uncontended vs contended iterations/ms of the default lock — the seed 4 figure.
  for (const nlohmann::json& c : scenarios.at("mutex").at("cases")) {
    if (c.at("lock") != "pthread") continue;
    figures[fmt::format("pthread_iterations_per_ms_{}_threads", c.at("threads").get<int>())] =
        c.at("iterations_per_ms").at("mean");
  }
  figures["condvar_cycles_per_s_median"] = scenarios.at("condvar").at("cycles_per_s").at("median");
  for (const auto& [kind, variant] : scenarios.at("storm").at("variants").items()) {
    figures["storm_" + kind] = {{"real_s", variant.at("real_s").at("mean")},
                                {"user_s", variant.at("user_s").at("mean")},
                                {"sys_s", variant.at("sys_s").at("mean")}};
  }
  const nlohmann::json& pi = scenarios.at("pi");
  if (pi.value("skipped", true)) {
    figures["pi"] = "skipped: " + pi.value("reason", std::string("unknown"));
  } else {
    for (const nlohmann::json& c : pi.at("cases")) {
      figures["pi_high_blocked_ms_" + c.at("lock").get<std::string>()] =
          c.at("high_blocked_ms").at("median");
    }
  }
  return figures;
}

void print_key_figures(const nlohmann::json& f, std::ostream& out) {
  fmt::print(out, "\nKey figures\n");
  if (f.contains("c2c_round_trip_ns")) {
    fmt::print(out, "  c2c round trip:            {:.1f} ns → bound {}/s handoffs\n",
               f["c2c_round_trip_ns"].get<double>(), format_figure(f["c2c_handoff_bound_per_s"]));
  }
  if (f.contains("best_handoff")) {
    const nlohmann::json& b = f["best_handoff"];
    fmt::print(out, "  best contended handoff:    {} ({} threads) {}/s = {:.2f} of the bound\n",
               b["lock"].get<std::string>(), b["threads"].get<int>(),
               format_figure(b["handoffs_per_s"]), b["fraction_of_bound"].get<double>());
  }
  for (const char* key :
       {"pthread_iterations_per_ms_1_threads", "pthread_iterations_per_ms_2_threads"}) {
    if (f.contains(key))
      fmt::print(out, "  {:<26} {}/ms\n", std::string(key) + ":", format_figure(f[key]));
  }
  fmt::print(out, "  condvar ping-pong:         {}/s cycles (median)\n",
             format_figure(f["condvar_cycles_per_s_median"]));
  for (const char* kind : {"storm_threads", "storm_processes"}) {
    if (!f.contains(kind)) continue;
    fmt::print(out, "  {:<26} {:.3f} s real, {:.3f} s user, {:.3f} s sys\n",
               std::string(kind) + ":", f[kind]["real_s"].get<double>(),
               f[kind]["user_s"].get<double>(), f[kind]["sys_s"].get<double>());
  }
  if (f.contains("pi") && f["pi"].is_string()) {
    fmt::print(out, "  pi:                        {}\n", f["pi"].get<std::string>());
  }
  for (const char* lock : {"pthread", "pthread-pi"}) {
    const std::string key = std::string("pi_high_blocked_ms_") + lock;
    if (f.contains(key)) {
      fmt::print(out, "  pi, high blocked ({}): {:.1f} ms\n", lock, f[key].get<double>());
    }
  }
}

}  // namespace lockscope::lab
