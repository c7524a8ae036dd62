// The lab's results as `lockscope diff` compares them: a `lockscope bench SCENARIO --json FILE`
// document (schema lockscope-bench/1, docs/bench.md) read into cases, each with the figures the
// lab measured once per run.
//
// A case is what the lab prints a summary for: a mutex lock at a thread count, the condvar
// ping-pong, a c2c CPU pair, a storm variant (threads or processes), a pi lock. Its figures are the
// ones the lab itself summarises, each with the direction that is better for it:
//   mutex    iterations_per_ms ↑, handoffs_per_s ↑ and fairness_min_over_max ↑ (2+ threads: with
//            one thread there is no handoff, and the fairness is 1 by construction)
//   condvar  cycles_per_s ↑        c2c  round_trip_ns ↓
//   storm    real_s ↓, user_s ↓, sys_s ↓ (calls_per_s is calls / real_s: the same test again)
//   pi       high_blocked_ms ↓
// The other per-run values (elapsed_s, acquisitions, per-thread counts, context switches) follow
// from the run's duration or explain a figure; they are not compared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace lockscope::compare {

// Which way a figure improves: a throughput up, a time down.
enum class Better : uint8_t { kHigher, kLower };

// A figure the lab measures per run: its name, unit and better direction.
struct BenchFigureKind {
  std::string_view name;  // as the bench JSON names it, and --fail-on: "iterations_per_ms"
  std::string_view unit;  // "/ms", "/s", "ns", "ms", "s"; "" for a fraction
  Better better = Better::kHigher;
};
// Every figure of the table above, in its order.
const std::vector<BenchFigureKind>& bench_figure_kinds();
// The kind named `name`; nullptr when there is none.
const BenchFigureKind* bench_figure_kind(std::string_view name);

// One figure of one case, and its value in each run.
struct BenchFigure {
  const BenchFigureKind* kind = nullptr;
  // One value per run. Empty when the file keeps only a summary of the case ("no per-run
  // values": nothing is invented from a summary).
  std::vector<double> values;
};

struct BenchCase {
  std::string scenario;  // "mutex"
  std::string lock;      // mutex and pi cases: the lock; "" otherwise
  // What else identifies the case within its scenario, as a reader says it: "2 threads",
  // "CPU 0 ↔ CPU 1", "threads" (a storm variant); "" for condvar's one case.
  std::string detail;
  std::size_t runs = 0;  // the runs the lab made of the case
  std::vector<BenchFigure> figures;
  const BenchFigure* figure(std::string_view name) const;
};

struct BenchResults {
  std::string path;
  std::string command;  // "lockscope bench mutex --locks pthread …"
  // The machine block, each field as text: cpu_model, online_cpus, kernel, glibc, build, …
  std::map<std::string, std::string> machine;
  // scenario → parameter → value as JSON text, without the parameters that only choose which
  // cases there are (locks, thread counts) or how many runs: two files that differ there still
  // compare case by case; a difference here is a different experiment, and diff warns of it.
  std::map<std::string, std::map<std::string, std::string>> parameters;
  std::vector<BenchCase> cases;        // in the file's order
  std::vector<std::string> scenarios;  // the scenarios the file holds, skipped ones included
  std::vector<std::string> skipped;    // "pi skipped: SCHED_FIFO not permitted here (…)"
};

// The results in `text` (the contents of the file `path`, named in errors). Throws
// std::invalid_argument with a one-line reason when it is not a lockscope-bench/1 document.
BenchResults parse_bench_results(std::string_view text, const std::string& path);
// The same, from the file. Throws std::invalid_argument when it cannot be read.
BenchResults read_bench_results(const std::string& path);

}  // namespace lockscope::compare
