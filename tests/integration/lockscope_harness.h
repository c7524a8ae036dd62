// Shared helpers of the integration tests: run a command and capture its output and end, make a
// temporary directory, find a fixture's marked line, load a profile the way `lockscope report` does.
#pragma once

#include <string>
#include <vector>

#include "analysis/profile_model.h"

namespace lockscope::testing {

struct CommandResult {
  int exit_status = -1;  // when the command exited
  int signal = 0;        // when it was killed by a signal
  std::string out;
  std::string err;
};

CommandResult run_command(const std::vector<std::string>& argv);
// `lockscope ARGS...` with the CLI under test.
CommandResult run_lockscope(const std::vector<std::string>& args);

std::string fixture(const std::string& name);         // path of a fixture binary
std::string fixture_source(const std::string& name);  // path of its .c file
// Line of the fixture source that carries the comment marker "// @marker".
int marker_line(const std::string& fixture_name, const std::string& marker);

class TemporaryDirectory {
 public:
  TemporaryDirectory();
  ~TemporaryDirectory();
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

Profile load_profile(const std::string& directory);  // read + symbolize
std::vector<std::string> profile_files(const std::string& directory);

// The lock of `process` with an acquire site at fixture:line; nullptr when none.
const LockSummary* lock_acquired_at(const ProcessProfile& process, const std::string& file_suffix,
                                    int line);
// The site of `lock` at fixture:line with operation `op`; nullptr when none.
const SiteSummary* site_at(const LockSummary& lock, const std::string& file_suffix, int line,
                           format::Operation op);

}  // namespace lockscope::testing
