// Thin, error-returning wrappers over the Linux scheduling and accounting calls the scenarios use:
// CPU affinity, SCHED_FIFO, clocks, getrusage. Errors come back as errno values, never exceptions,
// so a scenario can say "not permitted here: ran without, marked" instead of failing.
#pragma once

#include <pthread.h>

#include <cstdint>
#include <vector>

namespace lockscope::lab {

std::vector<int> allowed_cpus();
int pin_thread_to_cpu(pthread_t thread, int cpu);  // 0 or errno
int set_thread_fifo_priority(pthread_t thread,
                             int priority);  // 0 or errno; priority 0 → SCHED_OTHER
// Whether this process may use SCHED_FIFO at `priority` (tried on a short-lived thread).
int probe_fifo_permission(int priority);

std::int64_t monotonic_ns();
std::int64_t thread_cpu_ns();

struct ResourceUsage {
  double user_seconds = 0;
  double system_seconds = 0;
  std::int64_t voluntary_switches = 0;
  std::int64_t involuntary_switches = 0;
};
ResourceUsage resource_usage_self();
ResourceUsage resource_usage_children();
ResourceUsage operator-(const ResourceUsage& after, const ResourceUsage& before);

// `n` steps of dependent integer work the optimiser cannot remove: the unit of
// --cs-work/--outside-work.
inline std::uint64_t busy_work(std::uint32_t n, std::uint64_t seed = 1) {
  for (std::uint32_t i = 0; i < n; ++i) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    asm volatile("" : "+r"(seed));
  }
  return seed;
}

}  // namespace lockscope::lab
