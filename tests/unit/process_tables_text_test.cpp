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
  write_processes(ProfileViews(profile), ReportOptions{}, out);
  return out.str();
}

// A process that rewrote its arguments in place pads them to their old length: the COMMAND
// column ends where its text does.
TEST(ProcessTablesText, CommandEndsWithoutTheArgumentsPadding) {
  const std::string table = processes_table({"nginx: worker process        ", "", ""});
  EXPECT_NE(table.find("nginx: worker process\n"), std::string::npos) << table;
  EXPECT_NE(processes_table({}).find("/usr/sbin/nginx\n"), std::string::npos);
}

ProcessProfile process_of(uint32_t pid, std::string executable, uint64_t acquisitions) {
  ProcessProfile process;
  process.pid = pid;
  process.executable = std::move(executable);
  process.exit_path = format::ExitPath::kExit;
  process.exit_status = 0;
  process.threads.emplace_back();
  process.threads[0].acquisitions = acquisitions;
  return process;
}

// `make -j4` ran 98 processes that took no lock: without --all they are one line, by name; the
// first process and one that ended by a signal or a non-zero status are listed whatever they did;
// a single such process is a row in its place.
TEST(ProcessTablesText, ProcessesThatTookNoLockAreOneLineWithoutAll) {
  Profile profile;
  profile.processes.push_back(process_of(100, "/usr/bin/make", 0));
  profile.processes.push_back(process_of(101, "/usr/bin/ld", 500));
  for (uint32_t pid = 102; pid < 105; ++pid)
    profile.processes.push_back(process_of(pid, "/usr/libexec/gcc/cc1", 0));
  profile.processes.push_back(process_of(105, "/bin/sh", 0));
  profile.processes.push_back(process_of(106, "/bin/sh", 0));
  profile.processes.back().exit_path = format::ExitPath::kSignal;
  profile.processes.back().exit_status = 11;
  profile.processes.push_back(process_of(107, "/usr/libexec/gcc/cc1", 0));
  profile.processes.back().exit_status = 1;  // a compiler's error
  std::ostringstream folded;
  write_processes(ProfileViews(profile), ReportOptions{}, folded);
  const std::string text = folded.str();
  for (const char* pid : {"\n100 ", "\n101 ", "\n106 ", "\n107 "})
    EXPECT_NE(text.find(pid), std::string::npos) << pid << " not listed:\n" << text;
  for (const char* pid : {"\n102 ", "\n103 ", "\n104 ", "\n105 "})
    EXPECT_EQ(text.find(pid), std::string::npos) << pid << " listed:\n" << text;
  EXPECT_NE(text.find("and 4 more processes that took no lock (--all lists them): cc1 ×3, sh\n"),
            std::string::npos)
      << text;
  ReportOptions all;
  all.all = true;
  std::ostringstream listed;
  write_processes(ProfileViews(profile), all, listed);
  EXPECT_NE(listed.str().find("\n104 "), std::string::npos) << listed.str();
  EXPECT_EQ(listed.str().find("more processes"), std::string::npos);

  profile.processes.resize(3);  // make, ld and one cc1: its row stays between them
  std::ostringstream one;
  write_processes(ProfileViews(profile), ReportOptions{}, one);
  const size_t cc1 = one.str().find("\n102 ");
  ASSERT_NE(cc1, std::string::npos) << one.str();
  EXPECT_LT(one.str().find("\n101 "), cc1);
  EXPECT_EQ(one.str().find("more processes"), std::string::npos);
}

}  // namespace
}  // namespace lockscope
