#include "bench/condvar_scenario.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <pthread.h>

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "bench/bench_output.h"
#include "bench/sample_stats.h"
#include "bench/scheduling.h"

namespace lockscope::lab {

double cycles_per_second(std::uint64_t cycles, double elapsed_s) {
  return elapsed_s > 0 ? static_cast<double>(cycles) / elapsed_s : 0.0;
}

CondvarRun run_condvar_ping_pong(const CondvarOptions& options) {
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t turn_changed[2] = {PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER};
  int turn = 0;  // protected by mutex
  std::uint64_t passes = 0;
  std::atomic<int> fifo_error{0};
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};

  auto side = [&](int me) {
    if (options.fifo_priority > 0) {
      if (int rc = set_thread_fifo_priority(pthread_self(), options.fifo_priority))
        fifo_error.store(rc);
    }
    ready.fetch_add(1);
    // Block, don't spin: two SCHED_FIFO spinners would starve the (SCHED_OTHER) thread that says
    // go.
    go.wait(false, std::memory_order_acquire);
    const int other = 1 - me;
    for (std::uint64_t i = 0; i < options.iterations; ++i) {
      pthread_mutex_lock(&mutex);
      while (turn != me) pthread_cond_wait(&turn_changed[me], &mutex);
      turn = other;
      ++passes;
      if (options.signal_under_mutex) pthread_cond_signal(&turn_changed[other]);
      pthread_mutex_unlock(&mutex);
      if (!options.signal_under_mutex) pthread_cond_signal(&turn_changed[other]);
    }
  };
  std::thread first(side, 0), second(side, 1);
  while (ready.load() != 2) std::this_thread::yield();
  const std::int64_t start = monotonic_ns();
  go.store(true, std::memory_order_release);
  go.notify_all();
  first.join();
  second.join();
  CondvarRun run;
  run.elapsed_s = static_cast<double>(monotonic_ns() - start) / 1e9;
  run.passes = passes;
  run.fifo_error = fifo_error.load();
  pthread_cond_destroy(&turn_changed[0]);
  pthread_cond_destroy(&turn_changed[1]);
  pthread_mutex_destroy(&mutex);
  if (run.passes != 2 * options.iterations) {
    throw std::runtime_error(fmt::format("condvar ping-pong lost turns: {} passes for {} cycles",
                                         run.passes, options.iterations));
  }
  return run;
}

nlohmann::json run_condvar_scenario(const CondvarOptions& options, std::ostream& out) {
  int fifo_error = 0;
  if (options.fifo_priority > 0) fifo_error = probe_fifo_permission(options.fifo_priority);
  const bool fifo_applied = options.fifo_priority > 0 && fifo_error == 0;
  std::string marker;
  if (options.fifo_priority > 0 && !fifo_applied) {
    marker = " [SCHED_OTHER: FIFO not permitted]";
    fmt::print(
        out, "\ncondvar: SCHED_FIFO {} not permitted here ({}): running without, results marked\n",
        options.fifo_priority, std::strerror(fifo_error));
  }
  print_case_header(
      out, fmt::format("condvar: ping-pong, {} cycles per run, signal {} the mutex, {}{}",
                       options.iterations, options.signal_under_mutex ? "under" : "after releasing",
                       fifo_applied ? fmt::format("SCHED_FIFO {}", options.fifo_priority)
                                    : std::string("SCHED_OTHER"),
                       marker));
  std::vector<double> rates;
  nlohmann::json runs = nlohmann::json::array();
  for (int r = 0; r < options.runs; ++r) {
    const CondvarRun run = run_condvar_ping_pong(options);
    const double rate = cycles_per_second(options.iterations, run.elapsed_s);
    rates.push_back(rate);
    runs.push_back({{"elapsed_s", run.elapsed_s}, {"cycles_per_s", rate}});
    fmt::print(out, "  run {:>2}: Cycles/Second: {:.1f}\n", r + 1, rate);
  }
  const stats::SampleSummary summary = stats::summarize(rates);
  print_summary_lines(out, "Cycles/s", "/s", summary);
  return {{"parameters",
           {{"runs", options.runs},
            {"iterations", options.iterations},
            {"fifo_priority", options.fifo_priority},
            {"signal_under_mutex", options.signal_under_mutex}}},
          {"fifo",
           {{"requested", options.fifo_priority > 0},
            {"applied", fifo_applied},
            {"error", fifo_error ? std::strerror(fifo_error) : ""}}},
          {"runs", runs},
          {"cycles_per_s", to_json(summary)}};
}

}  // namespace lockscope::lab
