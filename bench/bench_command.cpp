// `lockscope bench SCENARIO [options]`: option parsing (CLI11), dispatch to one scenario, the text
// report on stdout and the optional `--json FILE` document: {schema, command, machine, scenarios:
// {name: …}}.
#include "bench/bench_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "bench/all_scenario.h"
#include "bench/c2c_scenario.h"
#include "bench/condvar_scenario.h"
#include "bench/lock_catalog.h"
#include "bench/machine_info.h"
#include "bench/mutex_scenario.h"
#include "bench/pi_scenario.h"
#include "bench/storm_scenario.h"

namespace lockscope::lab {
namespace {

constexpr const char* kScenarios = "mutex, condvar, storm, pi, c2c, all";
constexpr const char* kJsonSchema = "lockscope-bench/1";

std::string join(const std::vector<std::string>& items) {
  return fmt::format("{}", fmt::join(items, ", "));
}

// "all" or a comma list, each name checked against `known`.
std::vector<std::string> resolve_locks(const std::vector<std::string>& requested,
                                       const std::vector<std::string>& known) {
  if (requested.size() == 1 && requested[0] == "all") return known;
  for (const std::string& name : requested) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      throw BenchError(fmt::format("unknown lock '{}'", name),
                       "locks are: " + join(known) + " (or all)");
    }
  }
  return requested;
}

void write_json_document(const std::string& path, const std::vector<std::string>& args,
                         const nlohmann::json& scenarios) {
  const nlohmann::json document = {
      {"schema", kJsonSchema},
      {"command", "lockscope " + fmt::format("{}", fmt::join(args, " "))},
      {"machine", to_json(describe_machine())},
      {"scenarios", scenarios}};
  std::ofstream file(path);
  if (!file)
    throw BenchError(fmt::format("cannot write '{}'", path), "check that the directory exists");
  file << document.dump(2) << '\n';
  if (!file) throw BenchError(fmt::format("error while writing '{}'", path));
}

}  // namespace

int run_bench_command(const std::vector<std::string>& args) {
  if (args.size() >= 2 && args[1].rfind('-', 0) != 0) {
    const std::string& scenario = args[1];
    const std::vector<std::string> known = {"mutex", "condvar", "storm", "pi", "c2c", "all"};
    if (std::find(known.begin(), known.end(), scenario) == known.end()) {
      throw BenchError(fmt::format("unknown bench scenario '{}'", scenario),
                       fmt::format("scenarios are: {}", kScenarios));
    }
  }
  CLI::App app{"The lab: classic lock experiments across lock algorithms", "lockscope bench"};
  app.require_subcommand(1, 1);
  std::string json_path;
  auto add_json = [&](CLI::App* sub) {
    sub->add_option("--json", json_path, "also write the results, machine and parameters as JSON");
  };

  MutexOptions mutex;
  std::vector<std::string> mutex_locks{"all"};
  CLI::App* mutex_cmd =
      app.add_subcommand("mutex", "iterations/ms per lock and thread count (seed 4)");
  mutex_cmd->add_option("--locks", mutex_locks, "comma list of locks, or all")->delimiter(',');
  mutex_cmd->add_option("--threads", mutex.threads, "comma list of thread counts")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  auto* duration = mutex_cmd->add_option("--duration", mutex.duration_s, "seconds per run")
                       ->check(CLI::PositiveNumber);
  auto* iterations =
      mutex_cmd->add_option("--iterations", mutex.iterations, "iterations per thread")
          ->check(CLI::PositiveNumber);
  duration->excludes(iterations);
  mutex_cmd->add_option("--cs-work", mutex.cs_work, "work units inside the critical section");
  mutex_cmd->add_option("--outside-work", mutex.outside_work, "work units between acquisitions");
  mutex_cmd->add_option("--runs", mutex.runs, "runs per case")->check(CLI::PositiveNumber);
  add_json(mutex_cmd);

  CondvarOptions condvar;
  CLI::App* condvar_cmd = app.add_subcommand("condvar", "condvar ping-pong in cycles/s (seed 3)");
  condvar_cmd->add_option("--runs", condvar.runs, "runs")->check(CLI::PositiveNumber);
  condvar_cmd->add_option("--iterations", condvar.iterations, "cycles per run")
      ->check(CLI::PositiveNumber);
  condvar_cmd->add_option("--fifo", condvar.fifo_priority, "SCHED_FIFO priority (1-99)")
      ->check(CLI::Range(1, 99));
  condvar_cmd->add_flag("--signal-under-mutex", condvar.signal_under_mutex,
                        "signal before unlocking the mutex");
  add_json(condvar_cmd);

  StormOptions storm;
  CLI::App* storm_cmd = app.add_subcommand("storm", "N threads × M system calls (seed 2)");
  storm_cmd->add_option("--threads", storm.threads, "threads (and processes)")
      ->check(CLI::Range(1, 4096));
  storm_cmd->add_option("--calls", storm.calls, "system calls per thread")
      ->check(CLI::PositiveNumber);
  storm_cmd
      ->add_option("--syscall", storm.syscall_name, "getpid, gettid, getppid, getuid, sched_yield")
      ->check(CLI::IsMember(storm_syscall_names()));
  storm_cmd->add_option("--runs", storm.runs, "runs")->check(CLI::PositiveNumber);
  storm_cmd->add_flag("--processes", storm.compare_processes, "also run it with forked processes");
  add_json(storm_cmd);

  PiOptions pi;
  std::vector<std::string> pi_locks{"pthread", "pthread-pi"};
  CLI::App* pi_cmd = app.add_subcommand("pi", "priority inversion, plain vs PI mutex (seed 3)");
  pi_cmd->add_option("--locks", pi_locks, "comma list of pthread, pthread-adaptive, pthread-pi")
      ->delimiter(',');
  pi_cmd->add_option("--runs", pi.runs, "runs per lock")->check(CLI::PositiveNumber);
  pi_cmd->add_option("--hold-ms", pi.hold_ms, "CPU time the low thread needs")
      ->check(CLI::Range(1, 1000));
  pi_cmd->add_option("--hog-ms", pi.hog_ms, "how long medium hogs the CPU")
      ->check(CLI::Range(1, 500));
  add_json(pi_cmd);

  C2cOptions c2c;
  CLI::App* c2c_cmd =
      app.add_subcommand("c2c", "cache-line ping-pong between CPU pairs: the bound");
  c2c_cmd->add_option("--runs", c2c.runs, "runs per pair")->check(CLI::PositiveNumber);
  c2c_cmd->add_option("--round-trips", c2c.round_trips, "round trips per run")
      ->check(CLI::PositiveNumber);
  add_json(c2c_cmd);

  AllOptions all;
  CLI::App* all_cmd =
      app.add_subcommand("all", "a short pass over everything (the figures of bench/results/)");
  all_cmd->add_option("--scale", all.scale, "multiply durations and counts (tests use 0.01)")
      ->check(CLI::Range(0.001, 100.0));
  add_json(all_cmd);

  std::vector<std::string> reversed(args.rbegin(), args.rend());
  reversed.pop_back();  // CLI11 parses a reversed vector; drop "bench"
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::ParseError& error) {
    const CLI::App* failed = app.get_subcommands().empty() ? &app : app.get_subcommands().front();
    throw BenchError(error.what(), fmt::format("see `lockscope bench {} --help`",
                                               failed == &app ? "" : failed->get_name()));
  }

  std::ostream& out = std::cout;
  nlohmann::json scenarios;
  const CLI::App* chosen = app.get_subcommands().front();
  const std::string name = chosen->get_name();
  fmt::print(out, "lockscope bench {} on {}\n", name, one_line_description(describe_machine()));
  if (name == "mutex") {
    mutex.locks = resolve_locks(mutex_locks, LabLocks::names());
    scenarios["mutex"] = run_mutex_scenario(mutex, out);
  } else if (name == "condvar") {
    scenarios["condvar"] = run_condvar_scenario(condvar, out);
  } else if (name == "storm") {
    scenarios["storm"] = run_storm_scenario(storm, out);
  } else if (name == "pi") {
    pi.locks = resolve_locks(pi_locks, pi_lock_names());
    scenarios["pi"] = run_pi_scenario(pi, out);
  } else if (name == "c2c") {
    scenarios["c2c"] = run_c2c_scenario(c2c, out);
  } else {
    scenarios = run_all_scenarios(all, out);
  }
  out.flush();
  if (!json_path.empty()) write_json_document(json_path, args, scenarios);
  return 0;
}

}  // namespace lockscope::lab
