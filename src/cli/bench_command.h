// Entry point of `lockscope bench SCENARIO [options]` (the lab). args[0] is "bench".
// Returns the process exit status.
#pragma once

#include <string>
#include <vector>

namespace lockscope {
int run_bench_command(const std::vector<std::string>& args);
}
