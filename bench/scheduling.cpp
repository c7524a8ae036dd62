#include "bench/scheduling.h"

#include <sched.h>
#include <sys/resource.h>

#include <cerrno>
#include <ctime>
#include <thread>

namespace lockscope::lab {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

int pin_thread_to_cpu(pthread_t thread, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(thread, sizeof(set), &set);
}

int set_thread_fifo_priority(pthread_t thread, int priority) {
  sched_param param{};
  param.sched_priority = priority;
  return pthread_setschedparam(thread, priority > 0 ? SCHED_FIFO : SCHED_OTHER, &param);
}

int probe_fifo_permission(int priority) {
  int result = 0;
  std::thread probe([&] { result = set_thread_fifo_priority(pthread_self(), priority); });
  probe.join();
  return result;
}

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

namespace {
ResourceUsage resource_usage(int who) {
  rusage usage{};
  getrusage(who, &usage);
  auto seconds = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6;
  };
  return {seconds(usage.ru_utime), seconds(usage.ru_stime), usage.ru_nvcsw, usage.ru_nivcsw};
}
}  // namespace

ResourceUsage resource_usage_self() {
  return resource_usage(RUSAGE_SELF);
}
ResourceUsage resource_usage_children() {
  return resource_usage(RUSAGE_CHILDREN);
}

ResourceUsage operator-(const ResourceUsage& after, const ResourceUsage& before) {
  return {after.user_seconds - before.user_seconds, after.system_seconds - before.system_seconds,
          after.voluntary_switches - before.voluntary_switches,
          after.involuntary_switches - before.involuntary_switches};
}

}  // namespace lockscope::lab
