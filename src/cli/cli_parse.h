// CLI11 parsing as every subcommand does it: args[0] is the command's name; --help prints the
// help and throws CLI::CallForHelp (the command then returns 0); a bad option or value becomes a
// one-line CliError naming the command, with a hint to its --help.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace lockscope {
void parse_command_line(CLI::App& app, const std::vector<std::string>& args);
}  // namespace lockscope
