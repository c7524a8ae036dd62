#include "cli/cli_parse.h"

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/cli_error.h"

namespace lockscope {

void parse_command_line(CLI::App& app, const std::vector<std::string>& args) {
  std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);  // CLI11 wants them reversed
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    throw;
  } catch (const CLI::ParseError& error) {
    throw CliError(fmt::format("{}: {}", args[0], error.what()),
                   fmt::format("see `lockscope {} --help`", args[0]));
  }
}

}  // namespace lockscope
