#include "bench/machine_info.h"

#include <fmt/core.h>
#include <gnu/libc-version.h>
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>

namespace lockscope::lab {
namespace {

std::string cpuinfo_field(const std::string& key) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return {};
}

std::string build_description() {
  std::string build;
#ifdef NDEBUG
  build = "optimised (NDEBUG)";
#else
  build = "assertions on";
#endif
#if defined(__SANITIZE_THREAD__)
  build += ", TSan";
#endif
#if defined(__SANITIZE_ADDRESS__)
  build += ", ASan";
#endif
  return build;
}

}  // namespace

MachineInfo describe_machine() {
  MachineInfo machine;
  machine.cpu_model = cpuinfo_field("model name");
  if (machine.cpu_model.empty()) machine.cpu_model = "unknown";
  machine.online_cpus = static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN));
  cpu_set_t set;
  CPU_ZERO(&set);
  machine.allowed_cpus =
      sched_getaffinity(0, sizeof(set), &set) == 0 ? static_cast<unsigned>(CPU_COUNT(&set)) : 0;
  machine.hypervisor = cpuinfo_field("flags").find("hypervisor") != std::string::npos;
  utsname uts{};
  if (uname(&uts) == 0) {
    machine.kernel = uts.release;
    machine.architecture = uts.machine;
  }
  machine.glibc = gnu_get_libc_version();
  machine.compiler = fmt::format("g++ {}", __VERSION__);
  machine.build = build_description();
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &utc);
  machine.timestamp_utc = stamp;
  double load[1] = {0};
  if (getloadavg(load, 1) == 1) machine.load_average_1m = load[0];
  return machine;
}

nlohmann::json to_json(const MachineInfo& machine) {
  return {{"cpu_model", machine.cpu_model},
          {"online_cpus", machine.online_cpus},
          {"allowed_cpus", machine.allowed_cpus},
          {"hypervisor", machine.hypervisor},
          {"kernel", machine.kernel},
          {"architecture", machine.architecture},
          {"glibc", machine.glibc},
          {"compiler", machine.compiler},
          {"build", machine.build},
          {"timestamp_utc", machine.timestamp_utc},
          {"load_average_1m", machine.load_average_1m}};
}

std::string one_line_description(const MachineInfo& machine) {
  return fmt::format("{}, {} CPUs ({} allowed){}, Linux {} {}, glibc {}, {}, {}, load {:.2f}",
                     machine.cpu_model, machine.online_cpus, machine.allowed_cpus,
                     machine.hypervisor ? ", virtualised" : "", machine.kernel,
                     machine.architecture, machine.glibc, machine.compiler, machine.build,
                     machine.load_average_1m);
}

}  // namespace lockscope::lab
