// Children made with fork and exec are profiled too, daemons included (lockscope waits for them
// without becoming their parent); the target's exit status and signal pass through lockscope
// unchanged.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

using format::Operation;

// The program starts with the signal mask and dispositions lockscope was given: started with
// posix_spawn, it had glibc's two internal signals (32, 33) ignored, and so had everything it
// exec'd. Both runs start from a launcher that sets every disposition to its default.
TEST(Processes, TheProgramStartsWithTheSignalMaskAndDispositionsLockscopeWasGiven) {
  const std::vector<std::string> read_own = {"grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status"};
  std::vector<std::string> plain_argv = {fixture("default_signals_exec")};
  plain_argv.insert(plain_argv.end(), read_own.begin(), read_own.end());
  const CommandResult plain = run_command(plain_argv);
  ASSERT_EQ(plain.exit_status, 0) << plain.err;
  ASSERT_NE(plain.out.find("SigIgn:\t0000000000000000"), std::string::npos) << plain.out;
  TemporaryDirectory dir;
  std::vector<std::string> recorded_argv = {
      fixture("default_signals_exec"), LOCKSCOPE_CLI, "record", "-o", dir.path(), "--"};
  recorded_argv.insert(recorded_argv.end(), read_own.begin(), read_own.end());
  const CommandResult recorded = run_command(recorded_argv);
  EXPECT_EQ(recorded.exit_status, 0) << recorded.err;
  EXPECT_EQ(recorded.out, plain.out);
}

TEST(Processes, ForkAndExecYieldOneFilePerProcess) {
  TemporaryDirectory dir;
  const CommandResult result =
      run_lockscope({"record", "-o", dir.path(), "--", fixture("fork_exec")});
  ASSERT_EQ(result.exit_status, 0) << result.err;
  EXPECT_EQ(profile_files(dir.path()).size(), 2u);
  Profile profile = load_profile(dir.path());
  ASSERT_EQ(profile.processes.size(), 2u);
  const ProcessProfile& parent = profile.processes[0];
  const ProcessProfile& child = profile.processes[1];
  EXPECT_EQ(child.ppid, parent.pid);
  EXPECT_EQ(child.arguments.size(), 2u);
  EXPECT_EQ(child.arguments.at(1), "child");
  const LockSummary* parent_lock =
      lock_acquired_at(parent, "fork_exec.c", marker_line("fork_exec", "parent-lock"));
  ASSERT_NE(parent_lock, nullptr);
  EXPECT_EQ(parent_lock->acquisitions, 1u);
  const LockSummary* child_lock =
      lock_acquired_at(child, "fork_exec.c", marker_line("fork_exec", "exec-child-lock"));
  ASSERT_NE(child_lock, nullptr);
  EXPECT_EQ(child_lock->acquisitions, 7u);
  EXPECT_EQ(child.exit_path, format::ExitPath::kExit);
  EXPECT_EQ(child.exit_status, 0);
}

TEST(Processes, ChildThatLocksBeforeExecKeepsThatPartInItsOwnFile) {
  TemporaryDirectory dir;
  const CommandResult result = run_lockscope(
      {"record", "-o", dir.path(), "--", fixture("fork_exec"), "child-locks-before-exec"});
  ASSERT_EQ(result.exit_status, 0) << result.err;
  Profile profile = load_profile(dir.path());
  ASSERT_EQ(profile.processes.size(), 3u);
  const auto pre_exec =
      std::find_if(profile.processes.begin(), profile.processes.end(),
                   [](const ProcessProfile& p) { return p.exit_path == format::ExitPath::kExec; });
  ASSERT_NE(pre_exec, profile.processes.end());
  EXPECT_TRUE(pre_exec->parent_was_profiled);
  const LockSummary* lock =
      lock_acquired_at(*pre_exec, "fork_exec.c", marker_line("fork_exec", "child-pre-exec-lock"));
  ASSERT_NE(lock, nullptr);
  EXPECT_EQ(lock->acquisitions, 1u) << "the child starts from zero, not from the parent's counts";
}

TEST(Processes, ExitStatusPassesThrough) {
  TemporaryDirectory dir;
  const CommandResult result =
      run_lockscope({"record", "-o", dir.path(), "--", fixture("exit_and_signal"), "exit", "42"});
  EXPECT_EQ(result.exit_status, 42);
  Profile profile = load_profile(dir.path());
  ASSERT_EQ(profile.processes.size(), 1u);
  EXPECT_EQ(profile.processes[0].exit_status, 42);
}

TEST(Processes, UnderscoreExitStillWritesTheProfile) {
  TemporaryDirectory dir;
  const CommandResult result = run_lockscope(
      {"record", "-o", dir.path(), "--", fixture("exit_and_signal"), "underscore", "7"});
  EXPECT_EQ(result.exit_status, 7);
  Profile profile = load_profile(dir.path());
  ASSERT_EQ(profile.processes.size(), 1u);
  EXPECT_EQ(profile.processes[0].exit_path, format::ExitPath::kUnderscoreExit);
  EXPECT_EQ(profile.processes[0].exit_status, 7);
}

TEST(Processes, DeathBySignalIsReRaised) {
  TemporaryDirectory dir;
  const CommandResult result =
      run_lockscope({"run", "-o", dir.path(), "--", fixture("exit_and_signal"), "signal",
                     std::to_string(SIGTERM)});
  EXPECT_EQ(result.signal, SIGTERM);
  EXPECT_EQ(result.exit_status, -1);
}

TEST(Processes, RunPrintsTheReportToStderrAndKeepsStdoutForTheProgram) {
  TemporaryDirectory dir;
  const CommandResult result =
      run_lockscope({"run", "-o", dir.path(), "--", fixture("counter_threads"), "2", "100"});
  EXPECT_EQ(result.exit_status, 0);
  EXPECT_EQ(result.out, "counter=200\n");
  EXPECT_NE(result.err.find("*** locks present"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("counter_threads.c:" +
                            std::to_string(marker_line("counter_threads", "counter-lock"))),
            std::string::npos);
}

}  // namespace
}  // namespace lockscope::testing

namespace lockscope::testing {
namespace {

TEST(Processes, LocksTakenByExitHandlersAndDestructorsAreRecorded) {
  TemporaryDirectory dir;
  const CommandResult result =
      run_lockscope({"record", "-o", dir.path(), "--", fixture("exit_time_lock")});
  ASSERT_EQ(result.exit_status, 5) << result.err;
  Profile profile = load_profile(dir.path());
  ASSERT_EQ(profile.processes.size(), 1u);
  const ProcessProfile& process = profile.processes[0];
  EXPECT_EQ(process.exit_status, 5);
  for (const char* marker : {"atexit-lock", "destructor-lock"}) {
    const int line = marker_line("exit_time_lock", marker);
    const LockSummary* lock = lock_acquired_at(process, "exit_time_lock.c", line);
    ASSERT_NE(lock, nullptr) << marker;
    const SiteSummary* site = site_at(*lock, "exit_time_lock.c", line, format::Operation::kLock);
    ASSERT_NE(site, nullptr) << marker;
    EXPECT_EQ(site->count, 1u) << marker;
  }
}

}  // namespace
}  // namespace lockscope::testing

namespace lockscope::testing {
namespace {

// The bundled demo: its process-shared journal lock is used by the workers and by the forked
// snapshot child; the report ties the two processes' rows together.
TEST(Processes, DemoSharesItsJournalLockWithTheForkedChild) {
  TemporaryDirectory dir;
  const CommandResult result =
      run_lockscope({"run", "-o", dir.path(), "--", DEMO_BINARY, "2", "5000"});
  ASSERT_EQ(result.exit_status, 0) << result.err;
  EXPECT_NE(result.out.find("served 10000 requests"), std::string::npos) << result.out;
  Profile profile = load_profile(dir.path());
  ASSERT_EQ(profile.processes.size(), 2u);
  const ProcessProfile& parent = profile.processes[0];
  const ProcessProfile& child = profile.processes[1];
  EXPECT_EQ(child.ppid, parent.pid);
  uint64_t shared_address = 0;
  for (const LockSummary& lock : child.locks)
    if (lock.flags & format::kLockProcessShared) shared_address = lock.address;
  ASSERT_NE(shared_address, 0u);
  size_t used_in_child = 0;  // locks inherited from the parent stay listed, unused
  for (const LockSummary& lock : child.locks) used_in_child += lock.acquisitions > 0;
  EXPECT_EQ(used_in_child, 1u);
  bool parent_has_it = false;
  for (const LockSummary& lock : parent.locks)
    parent_has_it |= lock.address == shared_address && (lock.flags & format::kLockProcessShared);
  EXPECT_TRUE(parent_has_it);
  EXPECT_NE(result.err.find("also used by pid " + std::to_string(child.pid)), std::string::npos)
      << result.err;
  bool named = false;
  for (const ThreadSummary& thread : parent.threads) named |= thread.name == "kv-worker-1";
  EXPECT_TRUE(named);
}

}  // namespace
}  // namespace lockscope::testing

namespace lockscope::testing {
namespace {

// A plugin's lock sites keep their file:line although the plugin was unloaded before the profile
// was written (the module map is otherwise read at the write).
TEST(Modules, APluginsSitesStaySymbolizedAfterDlclose) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "dlopen_plugin", {PLUGIN_LIBRARY});
  const int line = marker_line("plugin_library", "plugin-lock");
  const LockSummary* lock = lock_acquired_at(process, "plugin_library.c", line);
  ASSERT_NE(lock, nullptr) << "the plugin's lock site is not at plugin_library.c:" << line;
  const SiteSummary* site = site_at(*lock, "plugin_library.c", line, format::Operation::kLock);
  ASSERT_NE(site, nullptr);
  EXPECT_EQ(site->count, 100u);
  EXPECT_EQ(site->location.function, "plugin_work");
}

}  // namespace
}  // namespace lockscope::testing

namespace lockscope::testing {
namespace {

TEST(ProcessShared, ASemPostSeesTheWaiterBlockedInAnotherProcess) {
  TemporaryDirectory dir;
  Profile profile = record_all_unchanged(dir, {fixture("shared_semaphore")});
  ASSERT_EQ(profile.processes.size(), 2u);
  const SiteSummary* post = nullptr;
  const SiteSummary* wait = nullptr;
  for (const ProcessProfile& process : profile.processes) {
    if (const SiteSummary* s =
            find_site(process, "shared_semaphore", "parent-post", format::Operation::kSemPost).site)
      post = s;
    if (const SiteSummary* s =
            find_site(process, "shared_semaphore", "child-wait", format::Operation::kSemWait).site)
      wait = s;
  }
  ASSERT_NE(post, nullptr);
  ASSERT_NE(wait, nullptr);
  EXPECT_EQ(post->with_waiters, 1u) << "the child was blocked in sem_wait when the parent posted";
  EXPECT_EQ(post->without_waiters, 0u);
  EXPECT_EQ(wait->contended, 1u);
  EXPECT_GE(wait->wait_sum_ns, 20 * kMs);
}

}  // namespace
}  // namespace lockscope::testing

namespace lockscope::testing {
namespace {

// A daemon the program starts keeps the parent it would have without lockscope (lockscope is no
// subreaper), and lockscope still waits for it: the daemon_child fixture (a parent that forks and
// exits at once with status 3, a child that detaches, locks 5 times and reports its parent).

struct DaemonReport {
  pid_t launcher = 0;  // the parent's own parent
  pid_t daemon = 0;
  pid_t daemon_ppid = 0;  // the daemon's getppid() once its parent was gone
};

std::optional<DaemonReport> read_daemon_report(const std::string& path) {
  const std::string text = slurp(path);
  DaemonReport report;
  if (std::sscanf(text.c_str(), "launcher=%d daemon=%d daemon_ppid=%d", &report.launcher,
                  &report.daemon, &report.daemon_ppid) != 3)
    return std::nullopt;
  return report;
}

// A plain run: nobody waits for the daemon, so wait for its report here.
std::optional<DaemonReport> await_daemon_report(const std::string& path) {
  for (int waited_ms = 0; waited_ms < 20000; waited_ms += 5) {
    if (auto report = read_daemon_report(path)) return report;
    usleep(5000);
  }
  return std::nullopt;
}

// The wait status of `pid` (a child of the test) once it ends, or nothing when it is still running
// after `limit_ms` (it is then killed and collected).
std::optional<int> wait_at_most(pid_t pid, int limit_ms) {
  for (int waited_ms = 0;; waited_ms += 5) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    if (waited_ms >= limit_ms) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return std::nullopt;
    }
    usleep(5000);
  }
}

StartedCommand start_recording_daemon(const TemporaryDirectory& dir, const TemporaryDirectory& work,
                                      const std::string& mode) {
  return start_command({LOCKSCOPE_CLI, "record", "-o", dir.path(), "--", fixture("daemon_child"),
                        work / "recorded", mode},
                       work, "lockscope");
}

size_t running_markers_left(const std::string& directory) {
  size_t left = 0;
  for (const auto& entry : std::filesystem::directory_iterator(directory))
    left += entry.path().extension() == ".running";
  return left;
}

const ProcessProfile* process_with_pid(const Profile& profile, pid_t pid) {
  for (const ProcessProfile& process : profile.processes)
    if (static_cast<pid_t>(process.pid) == pid) return &process;
  return nullptr;
}

uint64_t lock_count_at(const ProcessProfile& process, const std::string& marker) {
  const FoundSite found = find_site(process, "daemon_child", marker, Operation::kLock);
  return found.site ? found.site->count : 0;
}

// Runs daemon_child in `mode` under lockscope record to its end (20 s at most): lockscope's exit
// status must be the program's (3), and the daemon must have reported before lockscope ended.
struct DaemonRecording {
  pid_t lockscope = 0;
  CommandResult recorded;
  DaemonReport report;
};
void record_daemon(const TemporaryDirectory& dir, const TemporaryDirectory& work,
                   const std::string& mode, DaemonRecording& out) {
  const StartedCommand started = start_recording_daemon(dir, work, mode);
  out.lockscope = started.pid;
  const auto status = wait_at_most(started.pid, 20000);
  ASSERT_TRUE(status) << "lockscope was still waiting after 20 s (" << mode << ")";
  out.recorded = finish_command(started, *status);
  EXPECT_EQ(out.recorded.exit_status, 3) << "the program's status, not the daemon's\n"
                                         << out.recorded.err;
  const auto report = read_daemon_report(work / "recorded");
  ASSERT_TRUE(report) << "lockscope ended before the daemon did";
  out.report = *report;
}

TEST(Processes, ADaemonKeepsItsRealParentAndLockscopeStillWaitsForIt) {
  TemporaryDirectory dir, work;
  const CommandResult plain = run_command({fixture("daemon_child"), work / "plain"});
  EXPECT_EQ(plain.exit_status, 3);
  const auto plain_report = await_daemon_report(work / "plain");
  ASSERT_TRUE(plain_report) << "the plain daemon never reported";

  DaemonRecording run;
  ASSERT_NO_FATAL_FAILURE(record_daemon(dir, work, "exit", run));
  const DaemonReport* report = &run.report;
  EXPECT_EQ(report->launcher, run.lockscope);
  EXPECT_NE(report->daemon_ppid, run.lockscope) << "the daemon was re-parented to lockscope";
  EXPECT_EQ(report->daemon_ppid, plain_report->daemon_ppid)
      << "the daemon's parent differs from the one it has without lockscope";

  const Profile profile = load_profile(dir.path());
  EXPECT_TRUE(profile.problems.empty());
  ASSERT_EQ(profile.processes.size(), 2u);
  const ProcessProfile* daemon = process_with_pid(profile, report->daemon);
  ASSERT_NE(daemon, nullptr) << "the daemon's profile is missing";
  const ProcessProfile& parent =
      profile.processes[0].pid == daemon->pid ? profile.processes[1] : profile.processes[0];
  EXPECT_EQ(lock_count_at(parent, "parent-lock"), 1u);
  EXPECT_EQ(lock_count_at(parent, "daemon-lock"), 0u);
  EXPECT_EQ(parent.exit_status, 3);
  EXPECT_EQ(lock_count_at(*daemon, "daemon-lock"), 5u);
  EXPECT_EQ(lock_count_at(*daemon, "parent-lock"), 0u);
  EXPECT_EQ(daemon->ppid, parent.pid) << "its parent when it started";
  EXPECT_TRUE(daemon->parent_was_profiled);
  EXPECT_EQ(daemon->exit_path, format::ExitPath::kExit);
  EXPECT_EQ(daemon->exit_status, 0);
  EXPECT_EQ(running_markers_left(dir.path()), 0u);
}

// A descendant killed with SIGKILL never removes its running marker: lockscope must notice that
// the process is gone rather than wait for it forever.
TEST(Processes, ADescendantKilledWithSigkillDoesNotKeepLockscopeWaiting) {
  TemporaryDirectory dir, work;
  DaemonRecording run;
  ASSERT_NO_FATAL_FAILURE(record_daemon(dir, work, "sigkill", run));
  EXPECT_NE(run.report.daemon_ppid, run.lockscope) << "the daemon was re-parented to lockscope";
  const Profile profile = load_profile(dir.path());
  EXPECT_TRUE(profile.problems.empty());
  ASSERT_EQ(profile.processes.size(), 1u) << "SIGKILL: no profile of the daemon";
  EXPECT_EQ(lock_count_at(profile.processes[0], "parent-lock"), 1u);
  EXPECT_EQ(running_markers_left(dir.path()), 0u) << "the stale marker was not removed";
}

// A process whose main thread called pthread_exit() shows as a zombie (state Z) while its other
// threads go on: it has not ended, and lockscope waits for the profile it writes at its exit.
TEST(Processes, ADaemonWhoseMainThreadExitedFirstIsStillWaitedFor) {
  TemporaryDirectory dir, work;
  DaemonRecording run;
  ASSERT_NO_FATAL_FAILURE(record_daemon(dir, work, "main-thread-exits", run));
  const Profile profile = load_profile(dir.path());
  ASSERT_EQ(profile.processes.size(), 2u);
  const ProcessProfile* daemon = process_with_pid(profile, run.report.daemon);
  ASSERT_NE(daemon, nullptr) << "the daemon's profile is missing";
  // Counted over its locks, not at its call site: with the main thread gone, /proc/self/exe is
  // unreadable when the profile is written, so the program's own sites stay unsymbolized.
  uint64_t acquisitions = 0;
  for (const LockSummary& lock : daemon->locks) acquisitions += lock.acquisitions;
  EXPECT_EQ(acquisitions, 5u);
  EXPECT_EQ(daemon->exit_status, 0);
  EXPECT_EQ(running_markers_left(dir.path()), 0u);
}

// While lockscope waits for a daemon (the program is gone), a signal sent to lockscope goes on to
// the daemon, as it would have gone to the program: `kill lockscope` still ends the recording.
TEST(Processes, ASignalSentToLockscopeReachesTheDaemonItWaitsFor) {
  TemporaryDirectory dir, work;
  const StartedCommand started = start_recording_daemon(dir, work, "wait-signal");
  const auto report = await_daemon_report(work / "recorded");
  if (!report) {
    wait_at_most(started.pid, 0);
    FAIL() << "the daemon never reported";
  }
  ASSERT_EQ(kill(started.pid, SIGTERM), 0);
  const auto status = wait_at_most(started.pid, 20000);
  if (!status) kill(report->daemon, SIGKILL);
  ASSERT_TRUE(status) << "SIGTERM did not reach the daemon: lockscope was still waiting after 20 s";
  const CommandResult recorded = finish_command(started, *status);
  EXPECT_EQ(recorded.exit_status, 3) << "the program's status\n" << recorded.err;
  const Profile profile = load_profile(dir.path());
  ASSERT_EQ(profile.processes.size(), 2u);
  const ProcessProfile* daemon = process_with_pid(profile, report->daemon);
  ASSERT_NE(daemon, nullptr);
  EXPECT_EQ(daemon->exit_path, format::ExitPath::kSignal);
  EXPECT_EQ(daemon->exit_status, SIGTERM);
  EXPECT_EQ(lock_count_at(*daemon, "daemon-lock"), 5u);
  EXPECT_EQ(running_markers_left(dir.path()), 0u);
}

// daemon(3): glibc's ends the parent with its internal _exit, which lockscope did not see: the
// parent's profile was never written, and lockscope stopped waiting before the daemon's marker
// existed ("no profile was written ... killed by SIGKILL"; the daemon's profile came later,
// unread). Now both processes are in the profile, and lockscope returned after the daemon did.
TEST(Processes, ADaemonMadeByDaemon3IsWaitedForAndItsParentsProfileWritten) {
  TemporaryDirectory dir, work;
  const std::string report = work / "report";
  const CommandResult recorded =
      run_lockscope({"record", "-o", dir.path(), "--", fixture("daemon_call"), report});
  EXPECT_EQ(recorded.exit_status, 0) << recorded.err;
  const std::string text = slurp(report);
  int daemon_pid = 0;
  ASSERT_EQ(std::sscanf(text.c_str(), "daemon=%d", &daemon_pid), 1)
      << "lockscope ended before the daemon did\n"
      << recorded.err;
  const Profile profile = load_profile(dir.path());
  ASSERT_EQ(profile.processes.size(), 2u) << recorded.err;
  const ProcessProfile* daemon = process_with_pid(profile, daemon_pid);
  ASSERT_NE(daemon, nullptr);
  const FoundSite daemon_lock = find_site(*daemon, "daemon_call", "daemon-lock", Operation::kLock);
  ASSERT_NE(daemon_lock.site, nullptr);
  EXPECT_EQ(daemon_lock.site->count, 5u);
  const ProcessProfile& parent = profile.processes[0].pid == static_cast<uint32_t>(daemon_pid)
                                     ? profile.processes[1]
                                     : profile.processes[0];
  EXPECT_EQ(parent.exit_path, format::ExitPath::kUnderscoreExit);
  EXPECT_EQ(parent.exit_status, 0);
  const FoundSite parent_lock = find_site(parent, "daemon_call", "parent-lock", Operation::kLock);
  ASSERT_NE(parent_lock.site, nullptr);
  EXPECT_EQ(parent_lock.site->count, 1u);
  EXPECT_EQ(running_markers_left(dir.path()), 0u);
}

// A process that gives up root for another user (setuid) can no longer create files in the profile
// directory root made: its profile was lost at exit ("cannot write profile ...: Permission
// denied"; nginx's workers were missing from the report). The file it keeps open from before the
// change is written in place: every lock is there, before and after.
// The directory, as the user made it: as lockscope makes it; sticky (mode 1777), where the file
// kept before the drop (root's) may not be replaced by the user the process became, so it is
// written in place (before: "cannot write profile ...: Operation not permitted"); or with an ACL
// of its own, which the grant must leave as it was once the run is over.
enum class DirectoryKind { kPlain, kSticky, kOwnAcl };

// An access ACL: u::rwx, u:12345:r-x, g::r-x, m::r-x, o::r-x (linux/posix_acl_xattr.h).
std::string own_acl() {
  const uint32_t version = 2;
  const struct {
    uint16_t tag, permissions;
    uint32_t id;
  } entries[] = {{0x01, 7, ~0u}, {0x02, 5, 12345}, {0x04, 5, ~0u}, {0x10, 5, ~0u}, {0x20, 5, ~0u}};
  std::string value(reinterpret_cast<const char*>(&version), sizeof(version));
  value.append(reinterpret_cast<const char*>(entries), sizeof(entries));
  return value;
}

std::string acl_of(const std::string& path) {
  char value[1024];
  const ssize_t size = getxattr(path.c_str(), "system.posix_acl_access", value, sizeof(value));
  return size > 0 ? std::string(value, static_cast<size_t>(size)) : std::string();
}

void expect_profiles_across_a_privilege_drop(DirectoryKind kind) {
  TemporaryDirectory dir;
  if (kind == DirectoryKind::kSticky) {
    ASSERT_EQ(chmod(dir.path().c_str(), 01777), 0);
  }
  if (kind == DirectoryKind::kOwnAcl) {
    const std::string acl = own_acl();
    if (setxattr(dir.path().c_str(), "system.posix_acl_access", acl.data(), acl.size(), 0) != 0)
      GTEST_SKIP() << "no ACLs here: " << std::strerror(errno);
  }
  struct stat before;
  ASSERT_EQ(stat(dir.path().c_str(), &before), 0);
  const std::string acl_before = acl_of(dir.path());
  const Profile profile = record_all_unchanged(dir, {fixture("drops_privileges")});
  // The worker it forked and the program it exec'd as nobody have their profiles too (before,
  // "cannot write profile ...: Permission denied" for both).
  ASSERT_EQ(profile.processes.size(), 3u);
  std::map<std::string, uint64_t> counts;
  for (const ProcessProfile& process : profile.processes) {
    EXPECT_EQ(process.exit_path, format::ExitPath::kExit) << process.pid;
    for (const char* marker : {"before-drop", "after-drop", "child-after-drop", "exec-after-drop"})
      if (const FoundSite found = find_site(process, "drops_privileges", marker, Operation::kLock);
          found.site != nullptr)
        counts[marker] += found.site->count;
  }
  const std::map<std::string, uint64_t> expected = {
      {"before-drop", 10}, {"after-drop", 20}, {"child-after-drop", 5}, {"exec-after-drop", 7}};
  EXPECT_EQ(counts, expected);
  // The grant ends with the run: the directory's mode and ACL are as they were.
  struct stat after;
  ASSERT_EQ(stat(dir.path().c_str(), &after), 0);
  EXPECT_EQ(after.st_mode, before.st_mode);
  EXPECT_EQ(acl_of(dir.path()), acl_before);
  EXPECT_EQ(acl_before.empty(), kind != DirectoryKind::kOwnAcl);
}

TEST(Processes, AProcessThatGivesUpRootStillWritesItsProfile) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give it up";
  expect_profiles_across_a_privilege_drop(DirectoryKind::kPlain);
}

TEST(Processes, AProcessThatGivesUpRootWritesItsProfileInAStickyDirectory) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give it up";
  expect_profiles_across_a_privilege_drop(DirectoryKind::kSticky);
}

TEST(Processes, AProcessThatGivesUpRootLeavesTheDirectorysOwnAclAsItWas) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give it up";
  expect_profiles_across_a_privilege_drop(DirectoryKind::kOwnAcl);
}

// main() ended with pthread_exit and the workers locked on: the executable, its arguments and
// its call sites are known (/proc/self/exe and cmdline read as nothing once the main thread has
// gone: "[unknown module]+0x11a2"), and the zombie main thread is not one the snapshot "could not
// stop".
TEST(Processes, AProcessWhoseMainThreadExitedFirstIsNamedAndSymbolized) {
  TemporaryDirectory dir;
  const ProcessProfile process =
      record_program_unchanged(dir, {fixture("main_pthread_exit"), "1000"});
  EXPECT_EQ(process.executable, fixture("main_pthread_exit"));
  ASSERT_EQ(process.arguments.size(), 2u);
  EXPECT_EQ(process.arguments[1], "1000");
  const FoundSite lock = find_site(process, "main_pthread_exit", "worker-lock", Operation::kLock);
  ASSERT_NE(lock.site, nullptr);
  EXPECT_EQ(lock.site->count, 2000u);
  EXPECT_EQ(process.counter(format::Counter::kThreadsNotPaused), 0u);
}

// A program that returns with every descriptor its soft limit allows in use still has its
// profile (before: "cannot write profile ...: Too many open files").
TEST(Processes, AProcessThatUsedUpItsDescriptorsStillWritesItsProfile) {
  TemporaryDirectory dir;
  CommandResult recorded;
  const ProcessProfile process =
      record_program_unchanged(dir, {fixture("descriptors_used_up")}, nullptr, &recorded);
  EXPECT_EQ(recorded.out, "opened until EMFILE\n");
  const FoundSite lock = find_site(process, "descriptors_used_up", "lock", Operation::kLock);
  ASSERT_NE(lock.site, nullptr);
  EXPECT_EQ(lock.site->count, 10u);
  ASSERT_FALSE(process.arguments.empty()) << "its command line was read too";
}

}  // namespace
}  // namespace lockscope::testing
