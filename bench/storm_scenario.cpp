#include "bench/storm_scenario.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>

#include "bench/bench_output.h"
#include "bench/sample_stats.h"

namespace lockscope::lab {
namespace {

const std::vector<std::pair<std::string, long>>& storm_syscalls() {
  static const std::vector<std::pair<std::string, long>> table = {
      {"getpid", SYS_getpid}, {"gettid", SYS_gettid},           {"getppid", SYS_getppid},
      {"getuid", SYS_getuid}, {"sched_yield", SYS_sched_yield},
  };
  return table;
}

void make_calls(std::uint64_t calls, long number) {
  for (std::uint64_t i = 0; i < calls; ++i) syscall(number);
}

}  // namespace

std::vector<std::string> storm_syscall_names() {
  std::vector<std::string> names;
  for (const auto& [name, number] : storm_syscalls()) names.push_back(name);
  return names;
}

long storm_syscall_number(const std::string& name) {
  for (const auto& [known, number] : storm_syscalls()) {
    if (known == name) return number;
  }
  return -1;
}

double calls_per_second(int workers, std::uint64_t calls_each, double elapsed_s) {
  return elapsed_s > 0 ? static_cast<double>(workers) * static_cast<double>(calls_each) / elapsed_s
                       : 0;
}

StormRun run_thread_storm(int threads, std::uint64_t calls, long syscall_number) {
  const ResourceUsage before = resource_usage_self();
  const std::int64_t start = monotonic_ns();
  std::vector<std::thread> workers;
  workers.reserve(static_cast<std::size_t>(threads));
  for (int i = 0; i < threads; ++i) workers.emplace_back(make_calls, calls, syscall_number);
  for (std::thread& worker : workers) worker.join();
  return {static_cast<double>(monotonic_ns() - start) / 1e9, resource_usage_self() - before};
}

StormRun run_process_storm(int processes, std::uint64_t calls, long syscall_number) {
  const ResourceUsage before = resource_usage_children();
  const std::int64_t start = monotonic_ns();
  std::vector<pid_t> children;
  for (int i = 0; i < processes; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      make_calls(calls, syscall_number);
      _exit(0);
    }
    if (pid < 0) {
      const int error = errno;
      for (pid_t child : children) waitpid(child, nullptr, 0);
      throw std::runtime_error(fmt::format("storm: fork failed: {}", std::strerror(error)));
    }
    children.push_back(pid);
  }
  for (pid_t child : children) waitpid(child, nullptr, 0);
  return {static_cast<double>(monotonic_ns() - start) / 1e9, resource_usage_children() - before};
}

nlohmann::json run_storm_scenario(const StormOptions& options, std::ostream& out) {
  const long number = storm_syscall_number(options.syscall_name);
  if (number < 0)
    throw std::invalid_argument("unknown storm system call '" + options.syscall_name + "'");
  nlohmann::json variants = nlohmann::json::object();
  std::vector<NamedSummary> group;
  for (const bool processes : {false, true}) {
    if (processes && !options.compare_processes) continue;
    const std::string kind = processes ? "processes" : "threads";
    print_case_header(out, fmt::format("storm: {} {} × {} syscall({}) each", options.threads, kind,
                                       options.calls, options.syscall_name));
    std::vector<double> real, user, sys, rate;
    nlohmann::json runs = nlohmann::json::array();
    for (int r = 0; r < options.runs; ++r) {
      const StormRun run = processes ? run_process_storm(options.threads, options.calls, number)
                                     : run_thread_storm(options.threads, options.calls, number);
      real.push_back(run.real_s);
      user.push_back(run.usage.user_seconds);
      sys.push_back(run.usage.system_seconds);
      rate.push_back(calls_per_second(options.threads, options.calls, run.real_s));
      runs.push_back({{"real_s", run.real_s},
                      {"user_s", run.usage.user_seconds},
                      {"sys_s", run.usage.system_seconds},
                      {"calls_per_s", rate.back()},
                      {"voluntary_switches", run.usage.voluntary_switches},
                      {"involuntary_switches", run.usage.involuntary_switches}});
      fmt::print(out, "  run {:>2}: {:8.3f} real {:8.3f} user {:8.3f} sys   {}/s\n", r + 1,
                 run.real_s, run.usage.user_seconds, run.usage.system_seconds,
                 format_figure(rate.back()));
    }
    const stats::SampleSummary real_summary = stats::summarize(real);
    print_summary_lines(out, "Real time", "s", real_summary);
    print_summary_lines(out, "Calls/s", "/s", stats::summarize(rate));
    fmt::print(out, "  {:<30} {:.3f} s user, {:.3f} s sys\n", "CPU time (mean):", stats::mean(user),
               stats::mean(sys));
    variants[kind] = {{"runs", runs},
                      {"real_s", to_json(real_summary)},
                      {"user_s", to_json(stats::summarize(user))},
                      {"sys_s", to_json(stats::summarize(sys))},
                      {"calls_per_s", to_json(stats::summarize(rate))}};
    group.push_back({kind, real_summary});
  }
  nlohmann::json relative = print_relative_summary(out, "real time", group, false);
  return {{"parameters",
           {{"threads", options.threads},
            {"calls", options.calls},
            {"syscall", options.syscall_name},
            {"runs", options.runs},
            {"compare_processes", options.compare_processes}}},
          {"variants", variants},
          {"relative", relative}};
}

}  // namespace lockscope::lab
