// Every bad input gets a clear one-line error naming the problem and a non-zero exit; never a
// crash, never a lost result that could have been kept.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "common/crc32.h"
#include "common/profile_format.h"
#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

namespace fs = std::filesystem;

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

void expect_error(const CommandResult& result, int status, const std::string& needle) {
  EXPECT_EQ(result.exit_status, status) << result.err;
  EXPECT_EQ(result.err.rfind("lockscope: error: ", 0), 0u) << result.err;
  EXPECT_NE(first_line(result.err).find(needle), std::string::npos) << result.err;
}

// Two processes' files (fork_exec); returns them in start order.
std::vector<std::string> record_two_files(const TemporaryDirectory& dir) {
  const CommandResult result =
      run_lockscope({"record", "-o", dir.path(), "--", fixture("fork_exec")});
  EXPECT_EQ(result.exit_status, 0) << result.err;
  auto files = profile_files(dir.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(Errors, CommandNotFound) {
  expect_error(run_lockscope({"run", "--", "no-such-command-lockscope"}), 127,
               "command not found: no-such-command-lockscope");
}

TEST(Errors, CommandNotExecutable) {
  TemporaryDirectory dir;
  std::ofstream(dir / "script.sh") << "echo hi\n";
  expect_error(run_lockscope({"run", "-o", dir / "p", "--", dir / "script.sh"}), 126, "cannot run");
}

// A file the kernel cannot execute (no ELF, no #! line): exec's own error, one line, status 126,
// and no warning after it about a profile the program never had the chance to write.
TEST(Errors, AFileTheKernelCannotExecuteIsOneLine) {
  TemporaryDirectory dir;
  const std::string program = dir / "garbage";
  std::ofstream(program) << "not a program";
  fs::permissions(program, fs::perms::owner_all);
  for (const char* command : {"record", "run"}) {
    const CommandResult result = run_lockscope({command, "-o", dir / "p", "--", program});
    expect_error(result, 126, "cannot run");
    EXPECT_NE(result.err.find("Exec format error"), std::string::npos) << result.err;
    EXPECT_EQ(result.err.find("warning"), std::string::npos) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  }
}

TEST(Errors, NoCommand) {
  expect_error(run_lockscope({"record"}), 125, "no command to profile");
}

TEST(Errors, StaticallyLinkedProgramIsRefusedBeforeItRuns) {
  TemporaryDirectory dir;
  const std::string marker = dir / "ran";
  expect_error(run_lockscope({"run", "-o", dir / "p", "--", fixture("static_program"), marker}),
               126, "is statically linked");
  EXPECT_FALSE(fs::exists(marker)) << "the static program must not have been started";
}

TEST(Errors, UnwritableOutputDirectory) {
  // /dev/null is a file, so nothing can be created under it, even as root.
  expect_error(
      run_lockscope({"record", "-o", "/dev/null/profile", "--", fixture("counter_threads")}), 125,
      "cannot write profiles to '/dev/null/profile'");
}

TEST(Errors, UnknownOption) {
  const CommandResult result = run_lockscope({"report", "--no-such-option"});
  expect_error(result, 125, "--no-such-option");
}

TEST(Errors, UnknownRunOptionIsNotMistakenForTheCommand) {
  TemporaryDirectory dir;
  expect_error(run_lockscope({"run", "-o", dir / "p", "--bogus", "--", fixture("counter_threads")}),
               125, "unknown option '--bogus'");
  expect_error(run_lockscope({"record", "-o", dir / "p", "--bogus", fixture("counter_threads")}),
               125, "unknown option '--bogus'");
}

// Refused while the options are read: `report` reads no profile, `run` starts nothing (its
// profile directory is never made); one error line and its hint.
TEST(Errors, InvalidSkipFramesRegex) {
  TemporaryDirectory dir;
  const std::string needle = "--skip-frames: not a valid regular expression: 'with_lock('";
  const CommandResult report = run_lockscope({"report", dir.path(), "--skip-frames", "with_lock("});
  expect_error(report, 125, needle);
  EXPECT_EQ(std::count(report.err.begin(), report.err.end(), '\n'), 2) << report.err;
  EXPECT_NE(report.err.find("\nhint: see `lockscope report --help`\n"), std::string::npos)
      << report.err;
  const CommandResult run = run_lockscope(
      {"run", "-o", dir / "p", "--skip-frames", "[a-", "--", fixture("counter_threads")});
  expect_error(run, 125, "--skip-frames: not a valid regular expression: '[a-'");
  EXPECT_FALSE(fs::exists(dir / "p")) << "the program must not have been started";
  expect_error(run_lockscope({"report", dir.path(), "--caller-depth", "-1"}), 125,
               "--caller-depth");
}

// --top takes a whole number of locks: "-1" (it wrapped to every lock), "", a number too large
// for it and anything else are errors before anything runs; --sort takes a column's key.
TEST(Errors, MalformedTopAndSortAreRefused) {
  TemporaryDirectory dir;
  for (const std::string top : {"-1", "", "1e3", "5x", "99999999999999999999", " 3"}) {
    SCOPED_TRACE("--top '" + top + "'");
    expect_error(run_lockscope({"report", dir.path(), "--top", top}), 125, "--top");
    const CommandResult run =
        run_lockscope({"run", "-o", dir / "p", "--top", top, "--", fixture("counter_threads")});
    expect_error(run, 125, "--top");
    EXPECT_FALSE(fs::exists(dir / "p")) << "the program must not have been started";
  }
  expect_error(run_lockscope({"report", dir.path(), "--sort", "owner"}), 125,
               "--sort: 'owner' is not a column's key");
}

TEST(Errors, UnknownCommand) {
  expect_error(run_lockscope({"frobnicate"}), 125, "unknown command 'frobnicate'");
}

// The lab reports its errors in its own type; the CLI prints them like every other error.
TEST(Errors, BenchErrorsAreOneLineWithAHint) {
  const CommandResult scenario = run_lockscope({"bench", "nope"});
  EXPECT_EQ(scenario.exit_status, 125);
  EXPECT_EQ(scenario.err,
            "lockscope: error: unknown bench scenario 'nope'\n"
            "hint: scenarios are: mutex, condvar, storm, pi, c2c, all\n");
  const CommandResult lock = run_lockscope({"bench", "mutex", "--locks", "bogus"});
  expect_error(lock, 125, "unknown lock 'bogus'");
  EXPECT_NE(lock.err.find("\nhint: locks are: "), std::string::npos) << lock.err;
  const CommandResult option = run_lockscope({"bench", "mutex", "--frobnicate"});
  expect_error(option, 125, "--frobnicate");
  EXPECT_NE(option.err.find("\nhint: see `lockscope bench mutex --help`"), std::string::npos)
      << option.err;
}

TEST(Errors, ReportOfAMissingDirectory) {
  expect_error(run_lockscope({"report", "/nonexistent/lockscope"}), 125, "/nonexistent/lockscope");
}

TEST(Errors, ReportOfADirectoryWithoutProfiles) {
  TemporaryDirectory dir;
  expect_error(run_lockscope({"report", dir.path()}), 125, "no profile in");
}

TEST(Errors, TruncatedProfileIsNamedAndTheOthersAreStillReported) {
  TemporaryDirectory dir;
  const auto files = record_two_files(dir);
  ASSERT_EQ(files.size(), 2u);
  fs::resize_file(files[1], fs::file_size(files[1]) / 2);
  const CommandResult result = run_lockscope({"report", dir.path()});
  EXPECT_EQ(result.exit_status, 0);
  EXPECT_NE(result.out.find("fork_exec.c"), std::string::npos) << "the intact file is reported";
  EXPECT_NE(result.err.find(fs::path(files[1]).filename().string()), std::string::npos);
  EXPECT_NE(result.err.find("truncated"), std::string::npos) << result.err;
  EXPECT_NE(result.out.find("not read:"), std::string::npos) << "the report's footer says so too";
}

TEST(Errors, CorruptProfileIsNamed) {
  TemporaryDirectory dir;
  const auto files = record_two_files(dir);
  ASSERT_EQ(files.size(), 2u);
  {
    std::fstream file(files[0], std::ios::in | std::ios::out | std::ios::binary);
    // A byte of the first section's payload (the strings), which its CRC covers.
    const auto at =
        static_cast<std::streamoff>(sizeof(format::FileHeader) + sizeof(format::SectionHeader) + 1);
    file.seekg(at);
    const char old = static_cast<char>(file.get());
    file.seekp(at);
    file.put(static_cast<char>(old ^ 0x5a));
  }
  const CommandResult result = run_lockscope({"report", dir.path()});
  EXPECT_EQ(result.exit_status, 0);
  EXPECT_NE(result.err.find("corrupt"), std::string::npos) << result.err;
}

TEST(Errors, NewerFormatVersionIsNamed) {
  TemporaryDirectory dir;
  const auto files = record_two_files(dir);
  ASSERT_EQ(files.size(), 2u);
  for (const std::string& path : files) {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    format::FileHeader header;
    file.read(reinterpret_cast<char*>(&header), sizeof(header));
    header.version = format::kVersion + 1;
    header.header_crc = 0;
    header.header_crc = crc32(0, &header, sizeof(header));
    file.seekp(0);
    file.write(reinterpret_cast<const char*>(&header), sizeof(header));
  }
  const CommandResult result = run_lockscope({"report", dir.path()});
  expect_error(result, 125, "written by a newer lockscope");
}

TEST(Errors, GarbageFileIsNamed) {
  TemporaryDirectory dir;
  std::ofstream(dir / "1-1.lsprof") << "this is not a profile at all, but long enough to read";
  expect_error(run_lockscope({"report", dir.path()}), 125, "not a lockscope profile");
}

TEST(Errors, UnwritableReportOutput) {
  TemporaryDirectory dir;
  record_two_files(dir);
  expect_error(run_lockscope({"report", dir.path(), "-o", "/dev/null/report.json"}), 125,
               "cannot write the report to '/dev/null/report.json'");
}

TEST(Errors, PreviousProfileIsKeptAsOld) {
  TemporaryDirectory dir;
  const std::string profile = dir / "p";
  ASSERT_EQ(run_lockscope({"record", "-o", profile, "--", fixture("counter_threads"), "1", "1"})
                .exit_status,
            0);
  ASSERT_EQ(run_lockscope({"record", "-o", profile, "--", fixture("counter_threads"), "1", "1"})
                .exit_status,
            0);
  EXPECT_EQ(profile_files(profile).size(), 1u);
  EXPECT_EQ(profile_files(profile + ".old").size(), 1u);
}

// A profile a file size limit keeps from being written is said on stderr, but the line raises
// no signal: a stderr file already at the limit (SIGXFSZ) or a pipe nobody reads (SIGPIPE) killed
// the program there, where plain it exits 4 with its output.
TEST(Errors, TheRuntimesLineRaisesNoSignal) {
  TemporaryDirectory dir;
  const CommandResult plain = run_command({fixture("quiet_log_line")});
  ASSERT_EQ(plain.exit_status, 0) << plain.err;
  ASSERT_EQ(plain.out, "file child done\nfile: exit 4\npipe child done\npipe: exit 4\n");
  const CommandResult recorded =
      run_lockscope({"record", "-o", dir / "p", "--", fixture("quiet_log_line")});
  EXPECT_EQ(recorded.exit_status, 0) << recorded.err;
  EXPECT_EQ(recorded.out, plain.out) << recorded.err;
  EXPECT_EQ(profile_files(dir / "p").size(), 1u) << "the parent's; the children's were too large";
}

}  // namespace
}  // namespace lockscope::testing

namespace lockscope::testing {
namespace {

TEST(Errors, SetUserIdProgramIsRefusedBeforeItRuns) {
  // A copy of a dynamic program, set-user-ID to another user: secure execution would drop
  // LD_PRELOAD, so the profile would be silently empty.
  TemporaryDirectory dir;
  const std::string copy = dir / "setuid_copy";
  fs::copy_file(fixture("static_program"), copy);  // any file: the bit is checked before ELF
  if (geteuid() != 0) GTEST_SKIP() << "needs root to make a file owned by another user";
  if (chown(copy.c_str(), 65534, 65534) != 0) GTEST_SKIP() << "cannot chown to uid 65534";
  ASSERT_EQ(chmod(copy.c_str(), 04755), 0);
  const std::string marker = dir / "ran";
  expect_error(run_lockscope({"run", "-o", dir / "p", "--", copy, marker}), 126,
               "is set-user-ID (owner uid 65534)");
  EXPECT_FALSE(fs::exists(marker)) << "the program must not have been started";
}

// A profiled process that execs a program the runtime cannot enter: its profile names it, and
// the report says so.
TEST(Errors, AnExecdStaticProgramIsNamedInTheReport) {
  TemporaryDirectory dir;
  const std::string marker = dir / "ran";
  const CommandResult result = run_lockscope(
      {"run", "-o", dir / "p", "--", fixture("exec_program"), fixture("static_program"), marker});
  EXPECT_EQ(result.exit_status, 0) << result.err;
  EXPECT_TRUE(fs::exists(marker)) << "the static program ran, unprofiled";
  EXPECT_NE(unwrapped_notes(result.err)
                .find("exec'd " + fixture("static_program") + ": not profiled (" +
                      fixture("static_program") + " is statically linked)"),
            std::string::npos)
      << result.err;
  Profile profile = load_profile(dir / "p");
  ASSERT_EQ(profile.processes.size(), 1u);
  EXPECT_EQ(profile.processes[0].exit_path, format::ExitPath::kExec);
  EXPECT_EQ(profile.processes[0].exec_target, fixture("static_program"));
}

// execvp finds the program through PATH: the report names the file it found and why it was not
// profiled, judged by the exec'ing process (the report's own PATH has no such program).
TEST(Errors, AStaticProgramExecdThroughPathIsNamedWithTheFileFound) {
  TemporaryDirectory dir;
  const std::string marker = dir / "ran";
  const std::string fixtures = fs::path(fixture("static_program")).parent_path();
  const CommandResult result = run_lockscope(
      {"run", "-o", dir / "p", "--", "/usr/bin/env", "PATH=" + fixtures + ":/usr/bin:/bin",
       fixture("exec_program"), "fixture_static_program", marker});
  EXPECT_EQ(result.exit_status, 0) << result.err;
  EXPECT_TRUE(fs::exists(marker)) << "the static program ran, unprofiled";
  EXPECT_NE(unwrapped_notes(result.err)
                .find("exec'd fixture_static_program (" + fixture("static_program") +
                      "): not profiled (" + fixture("static_program") + " is statically linked)"),
            std::string::npos)
      << result.err;
  Profile profile = load_profile(dir / "p");
  ASSERT_EQ(profile.processes.size(), 1u) << "env recorded nothing and exec'd a profiled program";
  EXPECT_EQ(profile.processes[0].exec_target, "fixture_static_program");
  EXPECT_EQ(profile.processes[0].exec_resolved, fixture("static_program"));
  EXPECT_EQ(profile.processes[0].exec_unprofilable,
            fixture("static_program") + " is statically linked");
}

// A relative path is judged where the exec ran: a report read from another directory says the same.
TEST(Errors, AStaticProgramExecdByRelativePathIsJudgedWhereItRan) {
  TemporaryDirectory dir;
  const std::string marker = dir / "ran";
  const std::string fixtures = fs::path(fixture("static_program")).parent_path();
  const CommandResult result = run_lockscope(
      {"run", "-o", dir / "p", "--", "/bin/sh", "-c",
       "cd '" + fixtures + "' && exec ./fixture_exec_program ./fixture_static_program '" + marker +
           "'"});
  EXPECT_EQ(result.exit_status, 0) << result.err;
  EXPECT_TRUE(fs::exists(marker)) << "the static program ran, unprofiled";
  const std::string note =
      "exec'd ./fixture_static_program: not profiled (./fixture_static_program "
      "is statically linked)";
  EXPECT_NE(result.err.find(note), std::string::npos) << result.err;
  const CommandResult report = run_lockscope({"report", dir / "p"});
  EXPECT_EQ(report.exit_status, 0) << report.err;
  EXPECT_NE((report.out + report.err).find(note), std::string::npos) << report.out << report.err;
}

}  // namespace
}  // namespace lockscope::testing

namespace lockscope::testing {
namespace {

TEST(Errors, AProfileDirectoryRemovedWhileTheProgramRanIsNamedAndTheStatusKept) {
  TemporaryDirectory dir;
  const std::string profile = dir / "p";
  const CommandResult result = run_lockscope(
      {"run", "-o", profile, "--", "/bin/sh", "-c", "rm -rf '" + profile + "'; exit 3"});
  EXPECT_EQ(result.exit_status, 3) << "the program's status, whatever happened to the profile";
  EXPECT_NE(result.err.find("lockscope: error: no profile was written: the profile directory '" +
                            profile + "' no longer exists"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(result.err.find("killed"), std::string::npos) << result.err;
}

// A program whose umask is 0777: its profile and trace files were created with mode 0, which the
// user who ran lockscope could not read back unless root ("cannot open: Permission denied").
TEST(Errors, ProfileAndTraceFilesAreReadableWhateverTheProgramsUmask) {
  TemporaryDirectory dir;
  const CommandResult result =
      run_lockscope({"record", "-o", dir / "p", "--trace", "--", "/bin/sh", "-c",
                     "umask 0777; exec '" + fixture("counter_threads") + "'"});
  EXPECT_EQ(result.exit_status, 0) << result.err;
  size_t files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir / "p")) {
    if (!entry.is_regular_file()) continue;
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".lsprof") || name.ends_with(".lstrace")) {
      ++files;
      EXPECT_EQ(entry.status().permissions() & std::filesystem::perms::all,
                std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                    std::filesystem::perms::group_read | std::filesystem::perms::others_read)
          << name;
    }
  }
  EXPECT_GE(files, 2u) << "a profile and its trace files";
}

// A program that closed its stderr and opened a data file, which took descriptor 2, then left
// itself no descriptor to open: the runtime's line that it could not write the profile went into
// the program's data file, and lockscope said the program was killed by SIGKILL. Now the data is
// the program's alone, and the message says the program ended but its profile could not be written.
TEST(Errors, TheRuntimesLinesNeverGoToAFileTheProgramPutAtDescriptorTwo) {
  TemporaryDirectory dir;
  const std::string data = dir / "data.txt";
  const CommandResult result =
      run_lockscope({"run", "-o", dir / "p", "--", fixture("stderr_replaced"), data});
  EXPECT_EQ(result.exit_status, 0) << result.err;
  EXPECT_EQ(result.out, "data written to descriptor 2\n");
  EXPECT_EQ(slurp(data), "the program's own data\n");
  EXPECT_NE(result.err.find("the program ended (exit status 0) but its profile could not be "
                            "written"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(result.err.find("SIGKILL"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace lockscope::testing
