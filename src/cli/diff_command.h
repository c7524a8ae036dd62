// `lockscope diff BASE NEW`. args[0] is "diff". Returns the gate's status: 0 nothing regressed,
// kExitRegression a regression; errors are thrown as CliError with status kExitDiffError.
#pragma once

#include <string>
#include <vector>

namespace lockscope {
inline constexpr int kExitRegression = 1;
inline constexpr int kExitDiffError = 2;
int run_diff_command(const std::vector<std::string>& args);
}  // namespace lockscope
