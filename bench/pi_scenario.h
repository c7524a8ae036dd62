// `lockscope bench pi` (seed 3, the priority-inversion half): three SCHED_FIFO threads on one CPU.
//
//   low  (prio 10) takes the mutex and needs --hold-ms of CPU time inside it;
//   high (prio 30) then asks for the mutex and blocks;
//   medium (prio 20) then spins for --hog-ms without touching the mutex.
// With a plain mutex medium preempts low, so high waits ≈ hold + hog: the inversion. With a
// priority-inheritance mutex low runs at high's priority while high waits, so high waits ≈ hold.
// Every wait is bounded: medium stops after --hog-ms, high gives up after --timeout-ms
// (pthread_mutex_timedlock), so a broken run cannot hang the machine. Needs SCHED_FIFO and two CPUs
// (the orchestrating thread stays off the contended one); otherwise it prints why it skipped.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace lockscope::lab {

struct PiOptions {
  std::vector<std::string> locks{"pthread", "pthread-pi"};
  int runs = 3;
  int hold_ms = 20;
  int hog_ms = 100;
  int timeout_ms = 2000;
};

std::vector<std::string> pi_lock_names();  // the pthread kinds: timedlock is what bounds the wait

struct PiRun {
  double high_blocked_ms = 0;
  bool timed_out = false;
};

// The expected blocked time of the high-priority thread, in ms: hold (+ hog when no inheritance).
double expected_high_blocked_ms(const PiOptions& options, bool priority_inheritance);

// Empty when the scenario can run here, else the reason it cannot.
std::string pi_unavailable_reason();
PiRun run_priority_inversion_once(const std::string& lock, const PiOptions& options);
nlohmann::json run_pi_scenario(const PiOptions& options, std::ostream& out);

}  // namespace lockscope::lab
