#include "bench/c2c_scenario.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "bench/bench_output.h"
#include "bench/locks/lock_concept.h"
#include "bench/scheduling.h"

namespace lockscope::lab {

double handoff_bound_per_second(double round_trip_ns) {
  return 2e9 / round_trip_ns;
}

double round_trip_ns(std::int64_t elapsed_ns, std::uint64_t round_trips) {
  return static_cast<double>(elapsed_ns) / static_cast<double>(round_trips);
}

namespace {

struct alignas(kCacheLine) PingPongLine {
  std::atomic<std::uint64_t> value{0};
};

// Returns the round-trip time in ns, or an errno when a thread could not be pinned.
std::optional<double> ping_pong_once(int cpu_a, int cpu_b, std::uint64_t round_trips, int& error) {
  PingPongLine line;
  std::atomic<int> pinned{0};
  std::atomic<int> pin_error{0};
  std::int64_t elapsed_ns = 0;
  std::thread responder([&] {
    if (int rc = pin_thread_to_cpu(pthread_self(), cpu_b)) pin_error.store(rc);
    pinned.fetch_add(1);
    for (std::uint64_t i = 0; i < round_trips; ++i) {
      SpinWait spin;
      while (line.value.load(std::memory_order_acquire) != 2 * i + 1) spin.once();
      line.value.store(2 * i + 2, std::memory_order_release);
    }
  });
  if (int rc = pin_thread_to_cpu(pthread_self(), cpu_a)) pin_error.store(rc);
  while (pinned.load() == 0) cpu_relax();
  const std::int64_t start = monotonic_ns();
  for (std::uint64_t i = 0; i < round_trips; ++i) {
    line.value.store(2 * i + 1, std::memory_order_release);
    SpinWait spin;
    while (line.value.load(std::memory_order_acquire) != 2 * i + 2) spin.once();
  }
  elapsed_ns = monotonic_ns() - start;
  responder.join();
  error = pin_error.load();
  if (error != 0) return std::nullopt;
  return round_trip_ns(elapsed_ns, round_trips);
}

}  // namespace

C2cMeasurement measure_c2c(const C2cOptions& options) {
  C2cMeasurement measurement;
  std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) {
    measurement.skip_reason = "fewer than two CPUs allowed: no pair to measure";
    return measurement;
  }
  if (cpus.size() > static_cast<std::size_t>(options.max_cpus)) cpus.resize(options.max_cpus);
  // The measuring (main) thread pins itself; put its affinity back afterwards.
  cpu_set_t saved;
  pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved);
  for (std::size_t a = 0; a < cpus.size(); ++a) {
    for (std::size_t b = a + 1; b < cpus.size(); ++b) {
      C2cPair pair{cpus[a], cpus[b], {}, {}};
      for (int run = 0; run < options.runs; ++run) {
        int error = 0;
        auto rtt = ping_pong_once(pair.cpu_a, pair.cpu_b, options.round_trips, error);
        if (!rtt) {
          measurement.skip_reason = fmt::format("cannot pin threads: {}", std::strerror(error));
          pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
          return measurement;
        }
        pair.round_trip_ns.push_back(*rtt);
      }
      pair.summary = stats::summarize(pair.round_trip_ns);
      measurement.pairs.push_back(std::move(pair));
    }
  }
  pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
  for (const C2cPair& pair : measurement.pairs) {
    if (!measurement.best_round_trip_ns || pair.summary.median < *measurement.best_round_trip_ns) {
      measurement.best_round_trip_ns = pair.summary.median;
    }
  }
  return measurement;
}

nlohmann::json to_json(const C2cMeasurement& measurement, const C2cOptions& options) {
  nlohmann::json section = {
      {"parameters", {{"runs", options.runs}, {"round_trips", options.round_trips}}}};
  if (!measurement.best_round_trip_ns) {
    section["skipped"] = true;
    section["reason"] = measurement.skip_reason;
    return section;
  }
  nlohmann::json pairs = nlohmann::json::array();
  for (const C2cPair& pair : measurement.pairs) {
    pairs.push_back({{"cpu_a", pair.cpu_a},
                     {"cpu_b", pair.cpu_b},
                     {"round_trip_ns", pair.round_trip_ns},
                     {"summary", to_json(pair.summary)}});
  }
  section["pairs"] = pairs;
  section["best_round_trip_ns"] = *measurement.best_round_trip_ns;
  section["one_way_ns"] = *measurement.best_round_trip_ns / 2;
  section["handoff_bound_per_second"] = handoff_bound_per_second(*measurement.best_round_trip_ns);
  return section;
}

nlohmann::json run_c2c_scenario(const C2cOptions& options, std::ostream& out) {
  return print_c2c_report(measure_c2c(options), options, out);
}

nlohmann::json print_c2c_report(const C2cMeasurement& measurement, const C2cOptions& options,
                                std::ostream& out) {
  if (!measurement.best_round_trip_ns) {
    fmt::print(out, "\nc2c: skipped — {}\n", measurement.skip_reason);
    return to_json(measurement, options);
  }
  for (const C2cPair& pair : measurement.pairs) {
    print_case_header(out, fmt::format("c2c: CPU {} ↔ CPU {} ({} round trips per run)", pair.cpu_a,
                                       pair.cpu_b, options.round_trips));
    print_summary_lines(out, "Round trip", "ns", pair.summary);
  }
  const double best = *measurement.best_round_trip_ns;
  fmt::print(
      out,
      "\nc2c bound: best median round trip {:.1f} ns → one-way {:.1f} ns → at most {}/s lock "
      "handoffs\n",
      best, best / 2, format_figure(handoff_bound_per_second(best)));
  return to_json(measurement, options);
}

}  // namespace lockscope::lab
