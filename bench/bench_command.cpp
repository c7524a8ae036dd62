#include "cli/bench_command.h"

#include <fmt/core.h>

namespace lockscope {
// Scaffolding until the lab lands (issue 3).
int run_bench_command(const std::vector<std::string>& args) {
  fmt::print(stderr, "lockscope: error: `lockscope bench` is not built yet\n");
  return 125;
}
}  // namespace lockscope
