// `lockscope bench storm` (seed 2: 256 threads × 10000 getpid(), libthr vs libpthread by
// real/user/sys time). N threads — or, with --processes, also N forked processes — each make M raw
// system calls.
//
// The call goes through syscall(2), not the libc wrapper: glibc cached getpid() in user space
// until 2.25, which would turn the storm into a no-op. Real time covers creating and joining the
// threads, as `time` did in the seed; user and sys come from getrusage (RUSAGE_CHILDREN for the
// process variant).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "bench/scheduling.h"

namespace lockscope::lab {

struct StormOptions {
  int threads = 256;
  std::uint64_t calls = 10'000;  // per thread
  std::string syscall_name = "getpid";
  int runs = 3;
  bool compare_processes = false;
};

// The system calls a storm can make; each is cheap, harmless and takes no arguments.
std::vector<std::string> storm_syscall_names();
long storm_syscall_number(const std::string& name);  // -1 when unknown

double calls_per_second(int workers, std::uint64_t calls_each, double elapsed_s);

struct StormRun {
  double real_s = 0;
  ResourceUsage usage;
};

StormRun run_thread_storm(int threads, std::uint64_t calls, long syscall_number);
StormRun run_process_storm(int processes, std::uint64_t calls, long syscall_number);
nlohmann::json run_storm_scenario(const StormOptions& options, std::ostream& out);

}  // namespace lockscope::lab
