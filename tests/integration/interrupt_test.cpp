// Ctrl-C typed at a real terminal (a pseudo-terminal whose foreground group is lockscope's): the
// first ends the program, which writes its profile; a second, while `run` writes its report,
// ended lockscope silently (SIGINT's default action: exit 130, nothing on stderr, the profile on
// disk unmentioned). Now it ends with one line that says where the profile is, and with the
// program's status (src/cli/interrupted_report.h).
//
// The report is held open by writing it into a FIFO that nobody reads (its open waits for a
// reader), so that the second Ctrl-C surely comes while the report is being written: where a
// large program's symbolization would take seconds, this fixture's takes milliseconds.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

namespace fs = std::filesystem;

// True once `pid` waits in an open(2) for writing (the FIFO's: the profile's files, the
// program's ELF files and the directories lockscope reads are opened read-only), by its
// /proc/PID/syscall ("NUMBER DIRFD PATH FLAGS ...", readable by its parent); false after
// `timeout_ms` without.
bool waits_in_open_for_writing(pid_t pid, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(fmt::format("/proc/{}/syscall", pid));
    long number = -1;
    std::string directory, path, flags;
    if (in >> number >> directory >> path >> flags && number == SYS_openat &&
        (std::stoul(flags, nullptr, 16) & O_ACCMODE) == O_WRONLY)
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Runs `program` under `lockscope run` on a terminal, types Ctrl-C once it is ready ("ready" on
// the terminal), and again once lockscope is writing the report; returns lockscope's end.
CommandResult interrupted_twice(const TemporaryDirectory& dir,
                                const std::vector<std::string>& program) {
  const std::string fifo = dir / "report.txt";
  EXPECT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::vector<std::string> argv = {LOCKSCOPE_CLI, "run", "-o", dir / "p", "--report", fifo, "--"};
  argv.insert(argv.end(), program.begin(), program.end());
  TerminalCommand command = start_on_terminal(argv, dir, false);
  watch_terminal(command, 10'000, "ready");
  EXPECT_NE(command.shown.find("ready"), std::string::npos) << command.shown;
  type_on_terminal(command, "\x03");
  EXPECT_TRUE(waits_in_open_for_writing(command.pid, 10'000))
      << "lockscope never opened the report's FIFO";
  type_on_terminal(command, "\x03");
  bool timed_out = false;
  const CommandResult result = finish_on_terminal(command, 30, &timed_out);
  EXPECT_FALSE(timed_out) << "lockscope still running 30 s after the second Ctrl-C";
  EXPECT_TRUE(fs::is_fifo(fifo));
  return result;
}

TEST(Interrupts, ASecondCtrlCWhileTheReportIsWrittenSaysWhereTheProfileIs) {
  TemporaryDirectory dir;
  const CommandResult result = interrupted_twice(dir, {fixture("killed_later")});
  EXPECT_EQ(result.signal, SIGINT) << "the program's end, re-raised; exit " << result.exit_status;
  EXPECT_EQ(result.err, "lockscope: interrupted; the profile is in " + dir / "p" +
                            ": lockscope report " + dir / "p" + "\n");
  ASSERT_EQ(profile_files(dir / "p").size(), 1u);
  const CommandResult report = run_lockscope({"report", dir / "p"});
  EXPECT_EQ(report.exit_status, 0) << report.err;
  EXPECT_NE(report.out.find("killed_later.c"), std::string::npos) << report.out.substr(0, 400);
}

// A program that ends by exit(3) on the first Ctrl-C (a shell's trap): lockscope exits 3.
TEST(Interrupts, ASecondCtrlCKeepsAProgramsExitStatus) {
  TemporaryDirectory dir;
  const CommandResult result = interrupted_twice(
      dir, {"/bin/sh", "-c", "trap 'exit 3' INT; echo ready; while :; do sleep 0.05; done"});
  EXPECT_EQ(result.signal, 0);
  EXPECT_EQ(result.exit_status, 3);
  EXPECT_EQ(result.err, "lockscope: interrupted; the profile is in " + dir / "p" +
                            ": lockscope report " + dir / "p" + "\n");
}

}  // namespace
}  // namespace lockscope::testing
