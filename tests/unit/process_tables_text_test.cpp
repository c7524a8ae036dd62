// The text report's processes table (report/process_tables_text.h).
#include "report/process_tables_text.h"

#include <gtest/gtest.h>

#include <sstream>

namespace lockscope {
namespace {

std::string processes_table(std::vector<std::string> arguments) {
  Profile profile;
  profile.processes.emplace_back();
  profile.processes[0].pid = 4321;
  profile.processes[0].executable = "/usr/sbin/nginx";
  profile.processes[0].arguments = std::move(arguments);
  std::ostringstream out;
  write_processes(profile, out);
  return out.str();
}

// A process that rewrote its arguments in place pads them to their old length: the COMMAND
// column ends where its text does.
TEST(ProcessTablesText, CommandEndsWithoutTheArgumentsPadding) {
  const std::string table = processes_table({"nginx: worker process        ", "", ""});
  EXPECT_NE(table.find("nginx: worker process\n"), std::string::npos) << table;
  EXPECT_NE(processes_table({}).find("/usr/sbin/nginx\n"), std::string::npos);
}

}  // namespace
}  // namespace lockscope
