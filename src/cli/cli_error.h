// Errors that end the CLI: one line `lockscope: error: ...`, an optional `hint: ...` line, and an
// exit status (125 = lockscope's own error, 126 = command not runnable, 127 = command not found).
// Thrown by subcommands, caught once in main().
#pragma once

#include <stdexcept>
#include <string>

namespace lockscope {

inline constexpr int kExitOwnError = 125;
inline constexpr int kExitNotRunnable = 126;
inline constexpr int kExitNotFound = 127;

class CliError : public std::runtime_error {
 public:
  explicit CliError(std::string message, std::string hint = {}, int exit_status = kExitOwnError)
      : std::runtime_error(std::move(message)), hint_(std::move(hint)), exit_status_(exit_status) {}
  const std::string& hint() const { return hint_; }
  int exit_status() const { return exit_status_; }

 private:
  std::string hint_;
  int exit_status_;
};

}  // namespace lockscope
