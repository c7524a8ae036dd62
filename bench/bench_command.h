// Entry point of `lockscope bench SCENARIO [options]` (the lab). args[0] is "bench".
// Returns the process exit status. A bad scenario, lock or option, or a --json file that cannot be
// written, throws BenchError: the lab knows nothing of the CLI, whose main() turns it into its
// one-line error, hint and exit status (the lab depends on nothing in src/cli).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace lockscope::lab {

// One line saying what went wrong, and optionally a hint on how to put it right.
class BenchError : public std::runtime_error {
 public:
  explicit BenchError(std::string message, std::string hint = {})
      : std::runtime_error(std::move(message)), hint_(std::move(hint)) {}
  const std::string& hint() const { return hint_; }

 private:
  std::string hint_;
};

int run_bench_command(const std::vector<std::string>& args);

}  // namespace lockscope::lab
