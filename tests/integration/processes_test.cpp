// Children made with fork and exec are profiled too; the target's exit status and signal pass
// through lockscope unchanged.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>

#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

using format::Operation;

TEST(Processes, ForkAndExecYieldOneFilePerProcess) {
  TemporaryDirectory dir;
  const CommandResult result = run_lockscope({"record", "-o", dir.path(), "--", fixture("fork_exec")});
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
  const auto pre_exec = std::find_if(profile.processes.begin(), profile.processes.end(),
                                     [](const ProcessProfile& p) {
                                       return p.exit_path == format::ExitPath::kExec;
                                     });
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
  const CommandResult result = run_lockscope(
      {"run", "-o", dir.path(), "--", fixture("exit_and_signal"), "signal", std::to_string(SIGTERM)});
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
  const CommandResult plain = run_command({fixture("shared_semaphore")});
  const CommandResult recorded =
      run_lockscope({"record", "-o", dir.path(), "--", fixture("shared_semaphore")});
  ASSERT_EQ(recorded.exit_status, 0) << recorded.err;
  EXPECT_EQ(recorded.out, plain.out);
  Profile profile = load_profile(dir.path());
  ASSERT_EQ(profile.processes.size(), 2u);
  const SiteSummary* post = nullptr;
  const SiteSummary* wait = nullptr;
  for (const ProcessProfile& process : profile.processes) {
    if (const SiteSummary* s = find_site(process, "shared_semaphore", "parent-post",
                                         format::Operation::kSemPost).site)
      post = s;
    if (const SiteSummary* s = find_site(process, "shared_semaphore", "child-wait",
                                         format::Operation::kSemWait).site)
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
