// What the numbers were measured on: CPU model, cores, kernel, glibc, compiler, build flags.
// Every `--json` file and every results file carries this next to the figures (folly's habit).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace lockscope::lab {

struct MachineInfo {
  std::string cpu_model;
  unsigned online_cpus = 0;
  unsigned allowed_cpus = 0;  // sched_getaffinity: what this process may actually use
  bool hypervisor = false;
  std::string kernel;
  std::string architecture;
  std::string glibc;
  std::string compiler;
  std::string build;  // optimised/debug, sanitizers
  std::string timestamp_utc;
  double load_average_1m = 0;  // others' work on the machine skews every figure: keep it on record
};

MachineInfo describe_machine();
nlohmann::json to_json(const MachineInfo& machine);
std::string one_line_description(const MachineInfo& machine);

}  // namespace lockscope::lab
