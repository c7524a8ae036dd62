#include "bench/pi_scenario.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <thread>

#include "bench/bench_output.h"
#include "bench/sample_stats.h"
#include "bench/scheduling.h"

namespace lockscope::lab {
namespace {

constexpr int kLowPriority = 10;
constexpr int kMediumPriority = 20;
constexpr int kHighPriority = 30;

struct PiStage {
  pthread_mutex_t mutex;
  std::int64_t hold_cpu_ns = 0;
  std::int64_t hog_ns = 0;
  std::int64_t timeout_ns = 0;
  std::atomic<bool> low_holds{false};
  std::atomic<bool> high_waiting{false};
  std::int64_t high_blocked_ns = 0;
  int high_lock_result = 0;
};

void* low_thread(void* arg) {
  auto* stage = static_cast<PiStage*>(arg);
  pthread_mutex_lock(&stage->mutex);
  stage->low_holds.store(true);
  // CPU time, not wall time: while medium preempts us, our work does not progress — that is the
  // point.
  const std::int64_t cpu_start = thread_cpu_ns();
  const std::int64_t wall_deadline = monotonic_ns() + stage->timeout_ns;
  std::uint64_t seed = 1;
  while (thread_cpu_ns() - cpu_start < stage->hold_cpu_ns && monotonic_ns() < wall_deadline) {
    seed = busy_work(2000, seed);
  }
  pthread_mutex_unlock(&stage->mutex);
  return nullptr;
}

void* high_thread(void* arg) {
  auto* stage = static_cast<PiStage*>(arg);
  timespec deadline{};
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += stage->timeout_ns / 1'000'000'000;
  deadline.tv_nsec += stage->timeout_ns % 1'000'000'000;
  if (deadline.tv_nsec >= 1'000'000'000) {
    deadline.tv_sec += 1;
    deadline.tv_nsec -= 1'000'000'000;
  }
  stage->high_waiting.store(true);
  const std::int64_t start = monotonic_ns();
  stage->high_lock_result = pthread_mutex_timedlock(&stage->mutex, &deadline);
  stage->high_blocked_ns = monotonic_ns() - start;
  if (stage->high_lock_result == 0) pthread_mutex_unlock(&stage->mutex);
  return nullptr;
}

void* medium_thread(void* arg) {
  auto* stage = static_cast<PiStage*>(arg);
  const std::int64_t end = monotonic_ns() + stage->hog_ns;
  std::uint64_t seed = 1;
  while (monotonic_ns() < end) seed = busy_work(2000, seed);
  return nullptr;
}

pthread_t start_fifo_thread(void* (*body)(void*), PiStage* stage, int priority, int cpu) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
  pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
  sched_param param{};
  param.sched_priority = priority;
  pthread_attr_setschedparam(&attr, &param);
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
  pthread_t thread;
  const int rc = pthread_create(&thread, &attr, body, stage);
  pthread_attr_destroy(&attr);
  if (rc != 0)
    throw std::runtime_error(
        fmt::format("pi: cannot start a SCHED_FIFO thread: {}", std::strerror(rc)));
  return thread;
}

template <class Predicate>
void wait_until(Predicate done) {
  while (!done()) std::this_thread::sleep_for(std::chrono::microseconds(100));
}

}  // namespace

std::vector<std::string> pi_lock_names() {
  return {"pthread", "pthread-adaptive", "pthread-pi"};
}

double expected_high_blocked_ms(const PiOptions& options, bool priority_inheritance) {
  return priority_inheritance ? options.hold_ms : options.hold_ms + options.hog_ms;
}

std::string pi_unavailable_reason() {
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2)
    return "needs two allowed CPUs (one contended, one for the orchestrating thread)";
  if (int rc = probe_fifo_permission(kHighPriority)) {
    return fmt::format("SCHED_FIFO not permitted here ({})", std::strerror(rc));
  }
  return {};
}

PiRun run_priority_inversion_once(const std::string& lock, const PiOptions& options) {
  const std::vector<int> cpus = allowed_cpus();
  const int contended_cpu = cpus.back();
  PiStage stage;
  stage.hold_cpu_ns = static_cast<std::int64_t>(options.hold_ms) * 1'000'000;
  stage.hog_ns = static_cast<std::int64_t>(options.hog_ms) * 1'000'000;
  stage.timeout_ns = static_cast<std::int64_t>(options.timeout_ms) * 1'000'000;
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  if (lock == "pthread-pi") pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT);
  if (lock == "pthread-adaptive") pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
  pthread_mutex_init(&stage.mutex, &attr);
  pthread_mutexattr_destroy(&attr);

  // Keep the orchestrating thread off the contended CPU, then restore its affinity.
  cpu_set_t saved;
  pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved);
  pin_thread_to_cpu(pthread_self(), cpus.front());
  const pthread_t low = start_fifo_thread(low_thread, &stage, kLowPriority, contended_cpu);
  wait_until([&] { return stage.low_holds.load(); });
  const pthread_t high = start_fifo_thread(high_thread, &stage, kHighPriority, contended_cpu);
  wait_until([&] { return stage.high_waiting.load(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // let high block in the kernel
  const pthread_t medium = start_fifo_thread(medium_thread, &stage, kMediumPriority, contended_cpu);
  pthread_join(high, nullptr);
  pthread_join(medium, nullptr);
  pthread_join(low, nullptr);
  pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
  pthread_mutex_destroy(&stage.mutex);
  return {static_cast<double>(stage.high_blocked_ns) / 1e6, stage.high_lock_result != 0};
}

nlohmann::json run_pi_scenario(const PiOptions& options, std::ostream& out) {
  nlohmann::json parameters = {{"locks", options.locks},
                               {"runs", options.runs},
                               {"hold_ms", options.hold_ms},
                               {"hog_ms", options.hog_ms},
                               {"timeout_ms", options.timeout_ms}};
  const std::string reason = pi_unavailable_reason();
  if (!reason.empty()) {
    fmt::print(out,
               "\npi: skipped — {}\n  hint: run as root or with CAP_SYS_NICE / an rtprio limit "
               "(ulimit -r), on a machine with ≥ 2 CPUs\n",
               reason);
    return {{"parameters", parameters}, {"skipped", true}, {"reason", reason}};
  }
  nlohmann::json cases = nlohmann::json::array();
  std::vector<NamedSummary> group;
  for (const std::string& lock : options.locks) {
    const bool inherits = lock == "pthread-pi";
    print_case_header(out,
                      fmt::format("pi: {} — low(10) holds {} ms of CPU, medium(20) hogs {} ms, "
                                  "high(30) waits (expected ≈ {:.0f} ms)",
                                  lock, options.hold_ms, options.hog_ms,
                                  expected_high_blocked_ms(options, inherits)));
    std::vector<double> blocked;
    nlohmann::json runs = nlohmann::json::array();
    int timeouts = 0;
    for (int r = 0; r < options.runs; ++r) {
      const PiRun run = run_priority_inversion_once(lock, options);
      blocked.push_back(run.high_blocked_ms);
      timeouts += run.timed_out ? 1 : 0;
      runs.push_back({{"high_blocked_ms", run.high_blocked_ms}, {"timed_out", run.timed_out}});
    }
    const stats::SampleSummary summary = stats::summarize(blocked);
    print_summary_lines(out, "High blocked", "ms", summary);
    if (timeouts > 0)
      fmt::print(out, "  {} run(s) hit the {} ms timeout\n", timeouts, options.timeout_ms);
    cases.push_back({{"lock", lock},
                     {"priority_inheritance", inherits},
                     {"expected_high_blocked_ms", expected_high_blocked_ms(options, inherits)},
                     {"runs", runs},
                     {"high_blocked_ms", to_json(summary)},
                     {"timeouts", timeouts}});
    group.push_back({lock, summary});
  }
  nlohmann::json relative = print_relative_summary(out, "high-priority wait", group, false);
  return {{"parameters", parameters}, {"skipped", false}, {"cases", cases}, {"relative", relative}};
}

}  // namespace lockscope::lab
