#include "bench/mutex_scenario.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "bench/bench_output.h"
#include "bench/lock_catalog.h"

namespace lockscope::lab {

double iterations_per_ms(std::uint64_t acquisitions, double elapsed_s) {
  return elapsed_s > 0 ? static_cast<double>(acquisitions) / (elapsed_s * 1e3) : 0.0;
}

double handoffs_per_second(std::uint64_t handoffs, double elapsed_s) {
  return elapsed_s > 0 ? static_cast<double>(handoffs) / elapsed_s : 0.0;
}

double fairness_min_over_max(const std::vector<std::uint64_t>& per_thread) {
  if (per_thread.empty()) return 1.0;
  const auto [lo, hi] = std::minmax_element(per_thread.begin(), per_thread.end());
  return *hi == 0 ? 1.0 : static_cast<double>(*lo) / static_cast<double>(*hi);
}

double jain_fairness_index(const std::vector<std::uint64_t>& per_thread) {
  double sum = 0, sum_sq = 0;
  for (std::uint64_t x : per_thread) {
    sum += static_cast<double>(x);
    sum_sq += static_cast<double>(x) * static_cast<double>(x);
  }
  return sum_sq == 0 ? 1.0 : sum * sum / (static_cast<double>(per_thread.size()) * sum_sq);
}

double fraction_of_bound(double handoffs_per_s, double round_trip_ns) {
  return handoffs_per_s / handoff_bound_per_second(round_trip_ns);
}

MutexRun run_mutex_workload_by_name(const std::string& lock, const MutexWorkload& workload) {
  MutexRun run;
  const bool found =
      LabLocks::visit(lock, [&]<Lockable L>() { run = run_mutex_workload<L>(workload); });
  if (!found) throw std::invalid_argument("unknown lock '" + lock + "'");
  verify_mutual_exclusion(run, lock);
  return run;
}

namespace {

nlohmann::json run_to_json(const MutexRun& run) {
  const std::uint64_t total = total_acquisitions(run);
  return {{"elapsed_s", run.elapsed_s},
          {"acquisitions", total},
          {"iterations_per_ms", iterations_per_ms(total, run.elapsed_s)},
          {"handoffs", run.handoffs},
          {"handoffs_per_s", handoffs_per_second(run.handoffs, run.elapsed_s)},
          {"per_thread_acquisitions", run.per_thread},
          {"fairness_min_over_max", fairness_min_over_max(run.per_thread)},
          {"jain_index", jain_fairness_index(run.per_thread)},
          {"user_s", run.usage.user_seconds},
          {"sys_s", run.usage.system_seconds},
          {"voluntary_switches", run.usage.voluntary_switches},
          {"involuntary_switches", run.usage.involuntary_switches}};
}

struct CaseFigures {
  std::string lock;
  int threads = 0;
  stats::SampleSummary per_ms;
  stats::SampleSummary handoff_rate;
};

// One line per lock: iterations/ms per thread count, then the best contended handoff fraction.
void print_mutex_table(std::ostream& out, const MutexOptions& options,
                       const std::vector<CaseFigures>& figures, std::optional<double> rtt) {
  fmt::print(out, "\n{:<18}", "iterations/ms");
  for (int threads : options.threads) fmt::print(out, "{:>12}", fmt::format("{} thr", threads));
  fmt::print(out, "{:>16}\n", rtt ? "handoff/bound" : "handoffs/s");
  for (const std::string& lock : options.locks) {
    fmt::print(out, "{:<18}", lock);
    double best_rate = 0;
    for (int threads : options.threads) {
      for (const CaseFigures& f : figures) {
        if (f.lock != lock || f.threads != threads) continue;
        fmt::print(out, "{:>12}", format_figure(f.per_ms.mean));
        if (threads > 1) best_rate = std::max(best_rate, f.handoff_rate.mean);
      }
    }
    if (rtt) {
      fmt::print(out, "{:>16.2f}\n", fraction_of_bound(best_rate, *rtt));
    } else {
      fmt::print(out, "{:>16}\n", format_figure(best_rate));
    }
  }
}

}  // namespace

nlohmann::json run_mutex_scenario(const MutexOptions& options, std::ostream& out) {
  std::optional<double> rtt = options.c2c_round_trip_ns;
  if (!rtt && options.measure_bound) {
    rtt =
        measure_c2c(C2cOptions{.runs = 3, .round_trips = 50'000, .max_cpus = 2}).best_round_trip_ns;
  }
  const std::string mode = options.iterations > 0
                               ? fmt::format("{} iterations per thread", options.iterations)
                               : fmt::format("{:.2f} s per run", options.duration_s);
  nlohmann::json cases = nlohmann::json::array();
  nlohmann::json relative = nlohmann::json::object();
  std::vector<CaseFigures> figures;
  for (int thread_count : options.threads) {
    std::vector<NamedSummary> group;
    for (const std::string& lock : options.locks) {
      const MutexWorkload workload{thread_count, options.duration_s, options.iterations,
                                   options.cs_work, options.outside_work};
      nlohmann::json runs = nlohmann::json::array();
      std::vector<double> per_ms, handoff_rates, fairness;
      ResourceUsage usage_total;
      for (int r = 0; r < options.runs; ++r) {
        const MutexRun run = run_mutex_workload_by_name(lock, workload);
        runs.push_back(run_to_json(run));
        per_ms.push_back(iterations_per_ms(total_acquisitions(run), run.elapsed_s));
        handoff_rates.push_back(handoffs_per_second(run.handoffs, run.elapsed_s));
        fairness.push_back(fairness_min_over_max(run.per_thread));
        usage_total.user_seconds += run.usage.user_seconds;
        usage_total.system_seconds += run.usage.system_seconds;
        usage_total.voluntary_switches += run.usage.voluntary_switches;
        usage_total.involuntary_switches += run.usage.involuntary_switches;
      }
      CaseFigures f{lock, thread_count, stats::summarize(per_ms), stats::summarize(handoff_rates)};
      print_case_header(
          out, fmt::format("mutex: {} × {} thread{} ({}, cs-work {}, outside-work {})", lock,
                           thread_count, thread_count == 1 ? "" : "s", mode, options.cs_work,
                           options.outside_work));
      print_summary_lines(out, "Iterations/ms", "/ms", f.per_ms);
      nlohmann::json one_case = {{"lock", lock},
                                 {"threads", thread_count},
                                 {"runs", runs},
                                 {"iterations_per_ms", to_json(f.per_ms)},
                                 {"handoffs_per_s", to_json(f.handoff_rate)},
                                 {"fairness_min_over_max", to_json(stats::summarize(fairness))}};
      if (thread_count > 1) {
        std::string bound_text;
        if (rtt) {
          const double fraction = fraction_of_bound(f.handoff_rate.mean, *rtt);
          one_case["fraction_of_c2c_bound"] = fraction;
          bound_text = fmt::format(" = {:.2f} of the c2c bound ({}/s)", fraction,
                                   format_figure(handoff_bound_per_second(*rtt)));
        }
        fmt::print(out, "  {:<30} {:>9} ± {}/s{}\n",
                   "Handoffs/s:", format_figure(f.handoff_rate.mean),
                   format_spread(f.handoff_rate.stddev, f.handoff_rate.mean), bound_text);
      }
      const double runs_d = static_cast<double>(options.runs);
      fmt::print(out,
                 "  Fairness min/max acquisitions {:.2f} · per run: user {:.3f} s, sys {:.3f} s, "
                 "{:.0f} voluntary + {:.0f} involuntary context switches\n",
                 stats::mean(fairness), usage_total.user_seconds / runs_d,
                 usage_total.system_seconds / runs_d,
                 static_cast<double>(usage_total.voluntary_switches) / runs_d,
                 static_cast<double>(usage_total.involuntary_switches) / runs_d);
      cases.push_back(std::move(one_case));
      group.push_back({lock, f.per_ms});
      figures.push_back(std::move(f));
    }
    relative[std::to_string(thread_count)] = print_relative_summary(
        out, fmt::format("{} thread{}", thread_count, thread_count == 1 ? "" : "s"), group, true);
  }

  print_mutex_table(out, options, figures, rtt);

  // The headline: the best contended handoff rate against the physical bound.
  nlohmann::json best = nullptr;
  const CaseFigures* top = nullptr;
  for (const CaseFigures& f : figures) {
    if (f.threads > 1 && (!top || f.handoff_rate.mean > top->handoff_rate.mean)) top = &f;
  }
  if (top && rtt) {
    const double fraction = fraction_of_bound(top->handoff_rate.mean, *rtt);
    best = {{"lock", top->lock},
            {"threads", top->threads},
            {"handoffs_per_s", top->handoff_rate.mean},
            {"c2c_round_trip_ns", *rtt},
            {"bound_per_s", handoff_bound_per_second(*rtt)},
            {"fraction_of_bound", fraction},
            {"reaches_half", fraction >= 0.5}};
    fmt::print(out,
               "\nBest contended handoff rate: {} with {} threads, {}/s = {:.2f} of the c2c bound "
               "({}/s from a {:.1f} ns round trip)\n",
               top->lock, top->threads, format_figure(top->handoff_rate.mean), fraction,
               format_figure(handoff_bound_per_second(*rtt)), *rtt);
    if (fraction < 0.5) {
      fmt::print(
          out,
          "  Below half the bound: a handoff here moves the lock's line and the protected "
          "counter's line\n  (two one-way transfers, not one), and the waiter must first see "
          "the release; with cs-work or\n  more threads than CPUs, time in the critical "
          "section and preemption add to each handoff.\n");
    }
  }
  return {{"parameters",
           {{"locks", options.locks},
            {"threads", options.threads},
            {"duration_s", options.iterations > 0 ? 0.0 : options.duration_s},
            {"iterations", options.iterations},
            {"cs_work", options.cs_work},
            {"outside_work", options.outside_work},
            {"runs", options.runs}}},
          {"c2c_round_trip_ns", rtt ? nlohmann::json(*rtt) : nlohmann::json(nullptr)},
          {"cases", cases},
          {"relative", relative},
          {"best_handoff", best}};
}

}  // namespace lockscope::lab
