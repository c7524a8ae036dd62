// `lockscope bench condvar` (seed 3: Darren Hart's condvar_perf, ~270k cycles/s under SCHED_FIFO in
// 2010): two threads ping-pong through a pthread mutex and two condition variables.
//
// One cycle is a full round: thread 0 passes the turn to thread 1 and thread 1 passes it back, so
// each cycle is two signal → wake-up handoffs. --signal-under-mutex signals before unlocking (the
// waiter then often wakes only to block on the mutex); the default signals after unlocking. --fifo
// PRIO runs both threads under SCHED_FIFO; where that is not permitted the runs happen anyway and
// are marked.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>

namespace lockscope::lab {

struct CondvarOptions {
  int runs = 10;
  std::uint64_t iterations = 100'000;  // cycles per run
  int fifo_priority = 0;               // 0: SCHED_OTHER
  bool signal_under_mutex = false;
};

double cycles_per_second(std::uint64_t cycles, double elapsed_s);

struct CondvarRun {
  double elapsed_s = 0;
  std::uint64_t passes = 0;  // turn changes counted under the mutex: must be 2 × cycles
  int fifo_error = 0;        // errno from pthread_setschedparam, 0 when FIFO applied or not asked
};

CondvarRun run_condvar_ping_pong(const CondvarOptions& options);
nlohmann::json run_condvar_scenario(const CondvarOptions& options, std::ostream& out);

}  // namespace lockscope::lab
