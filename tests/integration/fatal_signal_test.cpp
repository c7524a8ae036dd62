// The run is never lost: a program that dies of a signal, re-raises from its own handler or calls
// quick_exit still has its profile, dies the same way, and sees its own signal dispositions; a
// signal sent to lockscope goes on to the program.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>
#include <thread>

#include "common/running_marker.h"
#include "common/runtime_config.h"
#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

const SiteSummary* counted_site(const ProcessProfile& process) {
  return find_site(process, "fatal_signal", "counted-lock", format::Operation::kLock).site;
}

// Runs MODE plain and recorded: the same death, the same output, one profile written by the
// signal's stand-in handler.
ProcessProfile record_death(const TemporaryDirectory& dir, const std::string& mode) {
  const CommandResult plain = run_command({fixture("fatal_signal"), mode});
  const CommandResult recorded =
      run_lockscope({"record", "-o", dir.path(), "--", fixture("fatal_signal"), mode});
  EXPECT_EQ(recorded.signal, plain.signal) << recorded.err;
  EXPECT_EQ(recorded.exit_status, plain.exit_status) << recorded.err;
  EXPECT_EQ(recorded.out, plain.out);
  Profile profile = load_profile(dir.path());
  EXPECT_TRUE(profile.problems.empty());
  if (profile.processes.size() != 1) {
    ADD_FAILURE() << "expected one profile, got " << profile.processes.size() << "\n"
                  << recorded.err;
    return {};
  }
  return profile.processes[0];
}

struct Death {
  const char* mode;
  int signal;
};

class DiesOfSignal : public ::testing::TestWithParam<Death> {};

TEST_P(DiesOfSignal, TheProfileIsWrittenAndTheProgramDiesOfTheSameSignal) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_death(dir, GetParam().mode);
  EXPECT_EQ(process.exit_path, format::ExitPath::kSignal);
  EXPECT_EQ(process.exit_status, GetParam().signal);
  const SiteSummary* site = counted_site(process);
  ASSERT_NE(site, nullptr);
  EXPECT_EQ(site->count, 1000u);
}

INSTANTIATE_TEST_SUITE_P(FatalSignals, DiesOfSignal,
                         ::testing::Values(Death{"term", SIGTERM}, Death{"int", SIGINT},
                                           Death{"abort", SIGABRT}, Death{"segv", SIGSEGV}),
                         [](const auto& param_info) { return std::string(param_info.param.mode); });

TEST(FatalSignals, TheProgramsOwnHandlerRunsAndItsReRaiseIsRecorded) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_death(dir, "handler");
  EXPECT_EQ(process.exit_path, format::ExitPath::kSignal);
  EXPECT_EQ(process.exit_status, SIGTERM);
  const SiteSummary* site = counted_site(process);
  ASSERT_NE(site, nullptr);
  EXPECT_EQ(site->count, 1001u) << "the handler's own lock is in the profile";
}

// A one-shot handler (SA_RESETHAND, or sysv_signal's) that re-raises: the kernel reset the
// disposition to its own SIG_DFL on delivery, past the interposed sigaction, so the re-raise
// killed the process unrecorded (exit 143, no profile, "killed by SIGKILL?"). The program sees
// the same dispositions as without lockscope (its output says them).
class OneShotHandler : public ::testing::TestWithParam<const char*> {};

TEST_P(OneShotHandler, ItRunsOnceAndItsReRaiseIsRecorded) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_death(dir, GetParam());
  EXPECT_EQ(process.exit_path, format::ExitPath::kSignal);
  EXPECT_EQ(process.exit_status, SIGTERM);
  const SiteSummary* site = counted_site(process);
  ASSERT_NE(site, nullptr);
  EXPECT_EQ(site->count, 1001u) << "the handler's own lock is in the profile";
}

INSTANTIATE_TEST_SUITE_P(FatalSignals, OneShotHandler, ::testing::Values("resethand", "sysv"));

TEST(FatalSignals, TheProgramSeesTheDispositionsItSetNeverTheStandIn) {
  const CommandResult plain = run_command({fixture("fatal_signal"), "query"});
  TemporaryDirectory dir;
  const CommandResult recorded =
      run_lockscope({"record", "-o", dir.path(), "--", fixture("fatal_signal"), "query"});
  EXPECT_EQ(recorded.exit_status, 0);
  EXPECT_EQ(recorded.out, plain.out);
  EXPECT_EQ(plain.out.find("SOMETHING ELSE"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("after SIG_DFL          SIGINT default"), std::string::npos)
      << plain.out;
}

TEST(FatalSignals, QuickExitWritesAfterTheAtQuickExitHandlers) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_death(dir, "quick");
  EXPECT_EQ(process.exit_path, format::ExitPath::kQuickExit);
  EXPECT_EQ(process.exit_status, 7);
  const SiteSummary* site = counted_site(process);
  ASSERT_NE(site, nullptr);
  EXPECT_EQ(site->count, 1001u) << "the at_quick_exit handler's lock is in the profile";
}

// A signal whose default action ends the process, arriving while its profile is written at
// _exit (a timer armed 10 ms before; 60,000 locks take tens of milliseconds to write): plain, the
// process is gone before it comes. It killed the process half-way through the write, and the
// profile was lost (exit 142, "no profile was written": Python's multiprocessing pool sends SIGTERM
// to its exiting workers, which went missing so). Now the write finishes and the process ends with
// its own status, also when the signal is delivered to another thread than the exiting one.
TEST(FatalSignals, ASignalArrivingWhileTheProfileIsWrittenAtExitLosesNothing) {
  for (const char* variant : {"alone", "thread"}) {
    SCOPED_TRACE(variant);
    TemporaryDirectory dir;
    const ProcessProfile process =
        record_program_unchanged(dir, {fixture("signal_while_exiting"), variant});
    EXPECT_EQ(process.exit_path, format::ExitPath::kUnderscoreExit);
    EXPECT_EQ(process.exit_status, 0);
    const FoundSite site =
        find_site(process, "signal_while_exiting", "each-lock", format::Operation::kLock);
    ASSERT_NE(site.lock, nullptr);
    EXPECT_EQ(process.locks.size(), 60000u);
  }
}

// Process 1 of a PID namespace (a container's init) ignores a signal whose disposition is the
// default. The stand-in handler received it, wrote the profile as the process's end, and its
// re-raise was ignored: the program ran on, exit 7, and the report said "ended by SIGTERM" with
// none of its later locks. Now it is ignored as plain, and the profile is the real end's.
TEST(FatalSignals, ANamespacesInitIgnoresASentSignalAsPlainAndIsRecordedToItsRealEnd) {
  const std::string unshare = "/usr/bin/unshare";  // util-linux, in every Debian
  if (access(unshare.c_str(), X_OK) != 0) GTEST_SKIP() << unshare << " is missing";
  const CommandResult probe = run_command({unshare, "--pid", "--fork", "/bin/true"});
  if (probe.exit_status != 0) GTEST_SKIP() << "no PID namespaces here: " << probe.err;
  TemporaryDirectory dir;
  const std::vector<std::string> program = {unshare, "--pid", "--fork", fixture("namespace_init")};
  const CommandResult plain = run_command(program);
  EXPECT_EQ(plain.exit_status, 7);
  std::vector<std::string> command = {LOCKSCOPE_CLI, "record", "-o", dir.path(), "--"};
  command.insert(command.end(), program.begin(), program.end());
  const CommandResult recorded = run_command(command);
  EXPECT_EQ(recorded.exit_status, 7) << recorded.err;
  EXPECT_EQ(recorded.out, plain.out);
  const Profile profile = load_profile(dir.path());
  const ProcessProfile* init = nullptr;
  for (const ProcessProfile& process : profile.processes)
    if (process.pid == 1) init = &process;
  ASSERT_NE(init, nullptr) << recorded.err;
  EXPECT_EQ(init->exit_path, format::ExitPath::kExit);
  EXPECT_EQ(init->exit_status, 7);
  const FoundSite site =
      find_site(*init, "namespace_init", "after-signal", format::Operation::kLock);
  ASSERT_NE(site.site, nullptr);
  EXPECT_EQ(site.site->count, 1000u);
}

// Sends `signal` to the started command once its output says "ready", and collects it; nothing
// when it had not said so, or had not ended 10 s after the start (it is then killed).
std::optional<CommandResult> signal_when_ready(const StartedCommand& started, int signal) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (slurp(started.out_path).find("ready") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  int status = 0;
  pid_t ended = 0;
  if (slurp(started.out_path).find("ready") != std::string::npos && kill(started.pid, signal) == 0)
    while (std::chrono::steady_clock::now() < deadline &&
           (ended = waitpid(started.pid, &status, WNOHANG)) == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (ended != started.pid) {
    kill(started.pid, SIGKILL);
    waitpid(started.pid, &status, 0);
    return std::nullopt;
  }
  return finish_command(started, status);
}

// lockscope started with SIGINT ignored (a script's `lockscope record -- server &`): a SIGINT sent
// to it still goes to the program, which starts with SIGINT ignored as plain and has set a
// handler of its own. Before, lockscope ignored it and the program ran on.
TEST(FatalSignals, ASignalLockscopeWasStartedIgnoringStillGoesToTheProgram) {
  TemporaryDirectory dir, capture;
  const std::string command = fmt::format("trap '' INT; exec '{}' record -o '{}' -- '{}' wait-int",
                                          LOCKSCOPE_CLI, dir.path(), fixture("fatal_signal"));
  const StartedCommand started = start_command({"/bin/sh", "-c", command}, capture, "record");
  // The shell exec'd lockscope: the same pid.
  const std::optional<CommandResult> ended = signal_when_ready(started, SIGINT);
  ASSERT_TRUE(ended) << "lockscope did not end after SIGINT";
  const CommandResult& result = *ended;
  EXPECT_EQ(result.exit_status, 3) << result.err;
  EXPECT_EQ(result.out, "locked 1000\nSIGINT at start: ignored\nready\ninterrupted\n");
  Profile profile = load_profile(dir.path());
  ASSERT_EQ(profile.processes.size(), 1u) << result.err;
  EXPECT_EQ(profile.processes[0].exit_path, format::ExitPath::kUnderscoreExit);  // its handler's
  EXPECT_EQ(profile.processes[0].exit_status, 3);
}

TEST(FatalSignals, SigtermToLockscopeGoesToTheProgramAndLockscopeWaitsForIt) {
  TemporaryDirectory dir, capture;
  const StartedCommand started = start_command(
      {LOCKSCOPE_CLI, "record", "-o", dir.path(), "--", fixture("fatal_signal"), "wait"}, capture,
      "record");
  const std::optional<CommandResult> ended = signal_when_ready(started, SIGTERM);
  ASSERT_TRUE(ended) << "lockscope did not end after SIGTERM";
  const CommandResult& result = *ended;
  EXPECT_EQ(result.signal, SIGTERM) << "lockscope ends like the program: killed by SIGTERM\n"
                                    << result.err;
  Profile profile = load_profile(dir.path());
  ASSERT_EQ(profile.processes.size(), 1u) << result.err;
  const ProcessProfile& process = profile.processes[0];
  EXPECT_EQ(process.exit_path, format::ExitPath::kSignal);
  EXPECT_EQ(process.exit_status, SIGTERM);
  errno = 0;
  EXPECT_EQ(kill(static_cast<pid_t>(process.pid), 0), -1) << "the program was left running";
  EXPECT_EQ(errno, ESRCH);
  const SiteSummary* site = counted_site(process);
  ASSERT_NE(site, nullptr);
  EXPECT_EQ(site->count, 1000u);
}

}  // namespace
}  // namespace lockscope::testing

namespace lockscope::testing {
namespace {

TEST(Snapshots, AProcessKilledBySigkillKeepsItsLastSnapshot) {
  TemporaryDirectory dir, capture;
  const StartedCommand started =
      start_command({LOCKSCOPE_CLI, "record", "-o", dir.path(), "--snapshot-interval", "0.05", "--",
                     fixture("killed_later")},
                    capture, "record");
  int pid = 0;
  const CommandResult result = kill_when_ready(started, 300, &pid);  // several snapshots
  ASSERT_GT(pid, 0);
  EXPECT_EQ(result.signal, SIGKILL) << result.err;
  Profile profile = load_profile(dir.path());
  ASSERT_EQ(profile.processes.size(), 1u) << "the last snapshot is the profile\n" << result.err;
  const ProcessProfile& process = profile.processes[0];
  EXPECT_EQ(process.exit_path, format::ExitPath::kSnapshot);
  const FoundSite loop = find_site(process, "killed_later", "loop-lock", format::Operation::kLock);
  ASSERT_NE(loop.site, nullptr);
  EXPECT_EQ(loop.site->count, 1000u);
  const FoundSite later =
      find_site(process, "killed_later", "later-lock", format::Operation::kLock);
  ASSERT_NE(later.site, nullptr) << "snapshots were taken while it ran on";
  EXPECT_GE(later.site->count, 100u) << "300 ms of 1 ms rounds, the last snapshot within 100 ms";
}

// Snapshots asked every 10 ms of a process whose profile takes milliseconds to write: each comes
// at least nine times its predecessor's write after it (the runtime's own log of its writes says
// when each began and how long it took), so they take at most a tenth of the run. Before, a write
// every 10 ms of a 10 ms write left the program half its time paused. (The program runs long
// enough for several: 3,000,000 pairs take 0.15 to 0.35 s here, and a loaded machine once wrote
// a single snapshot of 25 ms in them, then the exit's.)
TEST(Snapshots, EachComesAtLeastNineTimesThePreviousWritesLengthAfterIt) {
  TemporaryDirectory dir;
  const std::string runtime =
      (std::filesystem::path(LOCKSCOPE_CLI).parent_path().parent_path() / "lib" / "liblockscope.so")
          .string();
  std::vector<std::string> environment = {
      "LD_PRELOAD=" + runtime, std::string(config::kVariable) + "=" + config::kSnapshotKey +
                                   "=10," + config::kLogWritesKey + "=1," + config::kDirectoryKey +
                                   "=" + dir.path()};
  for (char** e = environ; *e; ++e)
    if (!std::string(*e).starts_with("LD_PRELOAD=") &&
        !std::string(*e).starts_with(std::string(config::kVariable) + "="))
      environment.push_back(*e);
  const CommandResult run =
      run_command({fixture("scale"), "array", "4096", "8000000"}, &environment);
  ASSERT_EQ(run.exit_status, 0) << run.err;
  // "profile of pid P written in D us, B bytes, begun at T us": the last line is the exit's.
  std::vector<std::pair<uint64_t, uint64_t>> writes;  // (begun, took), in us
  std::istringstream lines(run.err);
  for (std::string line; std::getline(lines, line);) {
    unsigned long long took = 0, bytes = 0, begun = 0;
    const size_t at = line.find("written in ");
    if (at == std::string::npos ||
        std::sscanf(line.c_str() + at, "written in %llu us, %llu bytes, begun at %llu us", &took,
                    &bytes, &begun) != 3)
      continue;
    writes.emplace_back(begun, took);
  }
  ASSERT_GE(writes.size(), 3u) << "two snapshots and the exit's write at least\n" << run.err;
  size_t too_soon = 0;
  std::string first;
  for (size_t i = 1; i + 1 < writes.size(); ++i) {  // each snapshot after the first
    const auto [previous_begun, previous_took] = writes[i - 1];
    const uint64_t gap = writes[i].first - (previous_begun + previous_took);
    if (gap < 8 * previous_took && too_soon++ == 0)
      first = "snapshot " + std::to_string(i) + ": " + std::to_string(gap) +
              " us after a write of " + std::to_string(previous_took) + " us";
  }
  EXPECT_EQ(too_soon, 0u) << "of " << writes.size() - 2 << " snapshots after the first; " << first;
}

// Kills what a hung run left behind: the program, named by its running marker (lockscope itself
// was killed by run_lockscope_bounded).
void kill_left_running(const std::string& directory) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    uint32_t pid = 0;
    uint64_t start_ticks = 0;
    if (format::parse_running_marker_name(name.data(), name.size(), pid, start_ticks) && pid > 1)
      kill(static_cast<pid_t>(pid), SIGKILL);
  }
}

// A signal handler that ends the process (_exit, or exit) while its thread was writing a snapshot
// hung for ever: the final write waited for the lock that thread's snapshot held (and with every
// signal blocked, only SIGKILL ended it). The fixture's own `open`, which the runtime calls while
// it writes a snapshot, raises the signal there. (It was sent by a second thread that saw the
// writer asleep, which on a loaded machine could come just after the snapshot.) exit-join: the
// program's atexit handler joins a thread that the interrupted snapshot had paused, which hung
// for ever. exit-spawn: the atexit handler starts a thread that locks, and joins it, which hung
// for ever: the thread's registration waited for the lock the snapshot held. exit-dlclose: the
// atexit handler unloads a plugin, whose note for the profile waited for the lock its own thread
// held, for ever. stall: the handler never returns, and the program's other thread ends the
// process with exit(); its final write waited for ever for the lock the stalled snapshot held
// (2607457..677e460 fixed the others by giving up the profile; this one hung still). In the
// snapshot's file phase too ("file"), whose half-written temporary file was left in the profile
// directory. Now a snapshot is written with its thread's signals blocked: the handler runs once
// the snapshot is done, the process ends as plain, status 3, and its profile is written, whole.
TEST(Snapshots, AHandlerThatEndsTheProcessDuringASnapshotEndsIt) {
  for (const char* how : {"_exit", "exit", "exit-join", "exit-spawn", "exit-dlclose", "stall"}) {
    for (int run = 0; run < 4; ++run) {
      const char* phase = run < 2 ? "merge" : "file";
      TemporaryDirectory dir;
      const BoundedResult bounded =
          run_lockscope_bounded({"record", "-o", dir.path(), "--snapshot-interval", "0.05", "--",
                                 fixture("exit_in_snapshot"), how, phase, PLUGIN_LIBRARY},
                                30);
      if (bounded.timed_out) kill_left_running(dir.path());
      ASSERT_FALSE(bounded.timed_out) << how << ": still running after 30 s\n"
                                      << bounded.result.err;
      EXPECT_EQ(bounded.result.exit_status, 3) << how << "\n" << bounded.result.err;
      EXPECT_NE(bounded.result.err.find("raised inside the runtime's open"), std::string::npos)
          << how << " " << phase << ": the signal came from elsewhere\n"
          << bounded.result.err;
      EXPECT_EQ(bounded.result.err.find("not written"), std::string::npos)
          << how << " " << phase << "\n"
          << bounded.result.err;
      for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
        EXPECT_NE(entry.path().extension(), ".tmp")
            << how << " " << phase << ": left " << entry.path();
      const Profile profile = load_profile(dir.path());
      ASSERT_EQ(profile.processes.size(), 1u) << how << " " << phase << "\n" << bounded.result.err;
      const ProcessProfile& process = profile.processes[0];
      EXPECT_EQ(process.exit_path, std::string_view(how) == "_exit"
                                       ? format::ExitPath::kUnderscoreExit
                                       : format::ExitPath::kExit)
          << how << " " << phase;
      EXPECT_EQ(process.exit_status, 3) << how << " " << phase;
    }
  }
}

// A snapshot that holds the other threads paused longer than a paused thread waits (its writer's
// thread sleeps 2.5 s in the program's own `open`, as on a hung filesystem): the paused
// threads go on, and their numbers stay true. Once they went on, every hold they took was left
// untimed (the pause bit stayed in their epochs: 15,463 acquisitions, 4,981 holds, "exact"), and
// a thread that left meanwhile, whose exit gave up waiting for the writer's lock, was reported as
// still running for ever. The slow snapshot itself counts as not paused the two threads that
// made calls while it was assembled, not the one asleep in read() throughout, nor the one that
// left (it counted all four). A thread whose first lock call came during the stall waited for
// the writer's lock for ever (its registration); now a second at most, and it is recorded once
// the stall is over.
TEST(Snapshots, ThreadsGoOnAfterAPauseThatLastsTooLongAndTheirNumbersStayTrue) {
  TemporaryDirectory dir;
  TemporaryDirectory stalled;
  const CommandResult recorded =
      run_lockscope({"record", "-o", dir.path(), "--snapshot-interval", "0.1", "--hold-sample", "1",
                     "--", fixture("slow_snapshot"), stalled.path() + "/slow.lsprof"});
  ASSERT_EQ(recorded.exit_status, 0) << recorded.err;
  unsigned long pairs = 0;
  unsigned long late_pairs = 0;
  int slow = 0;
  ASSERT_EQ(sscanf(recorded.out.c_str(), "pairs %lu, late pairs %lu, slow snapshot %d", &pairs,
                   &late_pairs, &slow),
            3)
      << recorded.out;
  ASSERT_EQ(slow, 1) << "the fixture could not stall a snapshot (the runtime no longer opens a "
                        "thread's comm file while it writes one?)\n"
                     << recorded.err;
  Profile profile = load_profile(dir.path());
  ASSERT_EQ(profile.processes.size(), 1u);
  const ProcessProfile& process = profile.processes[0];
  const FoundSite site = find_site(process, "slow_snapshot", "shared", format::Operation::kLock);
  ASSERT_NE(site.site, nullptr);
  EXPECT_EQ(site.site->count, pairs);
  EXPECT_EQ(site.site->hold.total(), pairs) << "every hold is timed (--hold-sample 1)";
  EXPECT_EQ(process.counter(format::Counter::kThreadsLiveAtExit), 1u);
  int ended = 0;
  for (const ThreadSummary& thread : process.threads)
    if (!(thread.flags & format::kThreadMain) && (thread.flags & format::kThreadExited)) ++ended;
  EXPECT_EQ(ended, 5) << "two workers, the thread that left during the stall, the sleeper, and "
                         "the thread that began during it";
  // That thread's registration waited a second for the stalled writer's lock, then its calls went
  // unrecorded, counted, until the stall was over; from then on they are recorded. Every call is
  // in one or the other (its registration may come at an unlock: then that pair's lock is counted
  // unrecorded, and its unlock recorded).
  const FoundSite late_lock =
      find_site(process, "slow_snapshot", "late-lock", format::Operation::kLock);
  const FoundSite late_unlock =
      find_site(process, "slow_snapshot", "late-unlock", format::Operation::kUnlock);
  ASSERT_NE(late_lock.site, nullptr);
  ASSERT_NE(late_unlock.site, nullptr);
  const uint64_t unrecorded = process.counter(format::Counter::kCallsBeforeRegistration);
  EXPECT_GT(unrecorded, 0u) << "no call of the late thread found the runtime's lock held";
  EXPECT_GT(late_lock.site->count, 0u) << "the late thread was never recorded";
  EXPECT_EQ(late_lock.site->count + late_unlock.site->count + unrecorded, 2 * late_pairs);

  Profile stalled_profile = load_profile(stalled.path());
  ASSERT_EQ(stalled_profile.processes.size(), 1u);
  EXPECT_EQ(stalled_profile.processes[0].exit_path, format::ExitPath::kSnapshot);
  EXPECT_EQ(stalled_profile.processes[0].counter(format::Counter::kThreadsNotPaused), 2u);
}

// A thread whose registration was deferred (its first lock call came while a stalled snapshot's
// writer held the runtime's lock) forks: its child, where that lock is free, records its calls
// from the first. The deferral's retry stamp is reset in the child (34ddb66); without that, the
// child's calls within 10 ms of the deferral passed through unrecorded (all 100 pairs here).
TEST(Snapshots, AChildForkedByAThreadWhoseRegistrationWasDeferredRecordsItsFirstCall) {
  TemporaryDirectory dir;
  const CommandResult recorded =
      run_lockscope({"record", "-o", dir.path(), "--snapshot-interval", "0.1", "--",
                     fixture("slow_snapshot"), "-", "fork"});
  ASSERT_EQ(recorded.exit_status, 0) << recorded.err;
  ASSERT_NE(recorded.out.find("child pairs 100"), std::string::npos) << recorded.out;
  ASSERT_NE(recorded.out.find("slow snapshot 1"), std::string::npos) << recorded.out;
  Profile profile = load_profile(dir.path());
  ASSERT_EQ(profile.processes.size(), 2u) << recorded.err;
  const bool first_is_parent = profile.processes[1].ppid == profile.processes[0].pid;
  const ProcessProfile& parent = profile.processes[first_is_parent ? 0 : 1];
  const ProcessProfile& child = profile.processes[first_is_parent ? 1 : 0];
  ASSERT_EQ(child.ppid, parent.pid);
  ASSERT_GT(parent.counter(format::Counter::kCallsBeforeRegistration), 0u)
      << "the forking thread's registration was not deferred: the test tests nothing";
  EXPECT_EQ(child.counter(format::Counter::kCallsBeforeRegistration), 0u);
  const FoundSite lock = find_site(child, "slow_snapshot", "late-lock", format::Operation::kLock);
  const FoundSite unlock =
      find_site(child, "slow_snapshot", "late-unlock", format::Operation::kUnlock);
  ASSERT_NE(lock.site, nullptr);
  ASSERT_NE(unlock.site, nullptr);
  EXPECT_EQ(lock.site->count, 100u);
  EXPECT_EQ(unlock.site->count, 100u);
}

TEST(Snapshots, AnExitAfterSnapshotsIsTheFinalProfile) {
  TemporaryDirectory dir;
  const CommandResult recorded = run_lockscope({"record", "-o", dir.path(), "--snapshot-interval",
                                                "0.01", "--", fixture("timed_holds"), "3000"});
  ASSERT_EQ(recorded.exit_status, 0) << recorded.err;
  Profile profile = load_profile(dir.path());
  ASSERT_EQ(profile.processes.size(), 1u);
  EXPECT_EQ(profile.processes[0].exit_path, format::ExitPath::kExit);
  const FoundSite site =
      find_site(profile.processes[0], "timed_holds", "timed-lock", format::Operation::kLock);
  ASSERT_NE(site.site, nullptr);
  EXPECT_EQ(site.site->count, 3000u);
}

}  // namespace
}  // namespace lockscope::testing
