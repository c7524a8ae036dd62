// The defaults of src/common/runtime_config.h are what a user meets on both sides: `lockscope
// record --help` shows them, and a runtime preloaded without the CLI (LOCKSCOPE_CONFIG=dir=… alone)
// records with the same hold sampling as one started by `lockscope record` without options.
#include "common/runtime_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "lockscope_harness.h"

extern char** environ;

namespace lockscope::testing {
namespace {

// The line of `help` that describes `option` (it starts with the option's names).
std::string option_line(const std::string& help, const std::string& option) {
  std::istringstream lines(help);
  for (std::string line; std::getline(lines, line);) {
    const size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos || line.compare(start, 1, "-") != 0) continue;
    const std::string names = line.substr(start, line.find(' ', start) - start);
    if (names == option || names.ends_with("," + option)) return line;
  }
  return {};
}

TEST(RuntimeConfig, RecordHelpShowsTheSharedDefaults) {
  const CommandResult help = run_lockscope({"record", "--help"});
  ASSERT_EQ(help.exit_status, 0) << help.err;
  const std::pair<const char*, std::string> defaults[] = {
      {"--output", config::kDefaultDirectory},
      {"--hold-sample", std::to_string(config::kDefaultHoldSamplePeriod)},
      {"--stack-depth", std::to_string(config::kDefaultStackDepth)},
      {"--unwind", config::kUnwindNames[config::kDefaultUnwind]},
      {"--stacks", config::kDefaultStacks},
      {"--trace-size", std::to_string(config::kDefaultTraceSize >> 20) + "M"},
      {"--trace-full", config::kDefaultTraceFull},
  };
  for (const auto& [option, value] : defaults) {
    const std::string line = option_line(help.out, option);
    ASSERT_FALSE(line.empty()) << option << " not in\n" << help.out;
    // CLI11 shows a default after the option's type: "--hold-sample UINT:UINT in [1 - 1000000]=32".
    const size_t at = line.find("=" + value);
    ASSERT_NE(at, std::string::npos) << option << ": " << line;
    const size_t after = at + 1 + value.size();
    EXPECT_TRUE(after == line.size() || line[after] == ' ') << option << ": " << line;
  }
  EXPECT_EQ(config::kDefaultHoldSamplePeriod, 32u) << "bench/overhead measured 1 in 32";
}

TEST(RuntimeConfig, ARuntimePreloadedWithoutTheCliSamplesHoldsAsTheCliDoes) {
  TemporaryDirectory dir;
  const std::string alone = dir / "alone", by_cli = dir / "cli";
  std::filesystem::create_directory(alone);
  const std::string runtime =
      (std::filesystem::path(LOCKSCOPE_CLI).parent_path().parent_path() / "lib" / "liblockscope.so")
          .string();
  std::vector<std::string> environment = {
      "LD_PRELOAD=" + runtime,
      std::string(config::kVariable) + "=" + config::kDirectoryKey + "=" + alone};
  for (char** e = environ; *e; ++e)
    if (!std::string(*e).starts_with("LD_PRELOAD=") &&
        !std::string(*e).starts_with(std::string(config::kVariable) + "="))
      environment.push_back(*e);
  const CommandResult plain = run_command({fixture("sleepy_holder"), "3"}, &environment);
  ASSERT_EQ(plain.exit_status, 0) << plain.err;
  const Profile without_cli = load_profile(alone);
  ASSERT_EQ(without_cli.processes.size(), 1u) << plain.err;

  const CommandResult recorded =
      run_lockscope({"record", "-o", by_cli, "--", fixture("sleepy_holder"), "3"});
  ASSERT_EQ(recorded.exit_status, 0) << recorded.err;
  const Profile with_cli = load_profile(by_cli);
  ASSERT_EQ(with_cli.processes.size(), 1u);

  EXPECT_EQ(without_cli.processes[0].hold_sample_period, config::kDefaultHoldSamplePeriod);
  EXPECT_EQ(with_cli.processes[0].hold_sample_period, config::kDefaultHoldSamplePeriod);
}

}  // namespace
}  // namespace lockscope::testing
