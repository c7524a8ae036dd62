// Real software under the runtime, counts cross-checked against what the programs say themselves:
// a threaded fixture with jemalloc preloaded (jemalloc's own per-mutex lock counters), Debian's
// python3 with threading (the GIL's mutex + condvar, threading.Lock as a semaphore) and memcached
// under a bounded load (its `stats` counters). Each test skips, naming the package, when its
// program is not installed; scripts/install-dependencies.sh installs them.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "lockscope_harness.h"

extern char** environ;

namespace lockscope::testing {
namespace {

namespace fs = std::filesystem;
using format::Operation;
using format::Primitive;

bool executable(const std::string& path) {
  return access(path.c_str(), X_OK) == 0;
}

std::string jemalloc_library() {
  for (const char* candidate :
       {"/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2",
        "/usr/lib/libjemalloc.so.2", "/usr/lib64/libjemalloc.so.2"})
    if (access(candidate, R_OK) == 0) return candidate;
  return {};
}

// The test's environment with NAME=VALUE set (replacing any NAME already there).
std::vector<std::string> environment_with(const std::string& name, const std::string& value) {
  std::vector<std::string> result;
  for (char** entry = environ; *entry; ++entry)
    if (std::string_view(*entry).substr(0, name.size() + 1) != name + "=") result.push_back(*entry);
  result.push_back(name + "=" + value);
  return result;
}

std::vector<std::string> record_command(const TemporaryDirectory& dir,
                                        const std::vector<std::string>& program) {
  std::vector<std::string> command = {LOCKSCOPE_CLI, "record", "-o", dir.path(), "--"};
  command.insert(command.end(), program.begin(), program.end());
  return command;
}

bool in_module(const ProcessProfile& process, const CodeLocation& where, const std::string& name) {
  return where.module < process.modules.size() &&
         fs::path(process.modules[where.module].path).filename().string().find(name) == 0;
}

bool has_module(const ProcessProfile& process, const std::string& name) {
  return std::any_of(process.modules.begin(), process.modules.end(), [&](const ModuleSummary& m) {
    return fs::path(m.path).filename().string().find(name) == 0;
  });
}

bool taken_in_module(const ProcessProfile& process, const LockSummary& lock,
                     const std::string& name) {
  return std::any_of(lock.sites.begin(), lock.sites.end(), [&](const SiteSummary& site) {
    return in_module(process, site.location, name);
  });
}

void expect_nothing_dropped(const ProcessProfile& process) {
  EXPECT_EQ(process.counter(format::Counter::kDroppedSites), 0u);
  EXPECT_EQ(process.counter(format::Counter::kDroppedLocks), 0u);
  EXPECT_EQ(process.counter(format::Counter::kDroppedThreads), 0u);
  EXPECT_EQ(process.counter(format::Counter::kUnbalancedUnlocks), 0u);
}

// ---------------------------------------------------------------------------------------------
// jemalloc preloaded by the user next to the runtime (the CLI puts ours first and keeps theirs).

TEST(RealPrograms, JemallocPreloadedThreadsKeepExactCountsAndJemallocsOwnLocksMatchItsCounters) {
  const std::string jemalloc = jemalloc_library();
  if (jemalloc.empty())
    GTEST_SKIP() << "libjemalloc.so.2 not installed (Debian package libjemalloc2)";
#if defined(__SANITIZE_ADDRESS__)
  // The fixture is built with the tests' sanitizers: ASan refuses to start behind a preloaded
  // library ("ASan runtime does not come first"), and replaces malloc itself.
  GTEST_SKIP() << "an ASan-built fixture cannot run with jemalloc preloaded ahead of ASan";
#endif
  constexpr int kThreads = 4;
  constexpr long kIterations = 20000;
  TemporaryDirectory dir;
  CommandResult profiled;
  const std::vector<std::string> environment = environment_with("LD_PRELOAD", jemalloc);
  const ProcessProfile process = record_program_unchanged(
      dir, {fixture("jemalloc_threads"), std::to_string(kThreads), std::to_string(kIterations)},
      &environment, &profiled);
  ASSERT_TRUE(has_module(process, "libjemalloc.so")) << "jemalloc was not loaded into the program";
  EXPECT_TRUE(has_module(process, "liblockscope.so"));
  EXPECT_EQ(process.exit_path, format::ExitPath::kExit);
  EXPECT_EQ(process.exit_status, 0);
  expect_nothing_dropped(process);

  // The fixture's own mutex: exactly N x M, at its marked lines.
  const FoundSite lock = find_site(process, "jemalloc_threads", "shared-lock", Operation::kLock);
  ASSERT_NE(lock.site, nullptr) << "the fixture's mutex is missing from the profile";
  const uint64_t shared_pairs = kThreads * kIterations;
  EXPECT_EQ(lock.site->count, shared_pairs);
  EXPECT_EQ(lock.lock->acquisitions, shared_pairs);
  const SiteSummary* unlock =
      site_of(*lock.lock, "jemalloc_threads", "shared-unlock", Operation::kUnlock);
  ASSERT_NE(unlock, nullptr);
  EXPECT_EQ(unlock->count, shared_pairs);

  // Main + N workers; each worker took the shared mutex M times and jemalloc's locks besides (its
  // arena and tcache bookkeeping, also at thread exit), and released all of them.
  EXPECT_EQ(process.threads.size(), kThreads + 1u);
  EXPECT_EQ(process.counter(format::Counter::kThreadsSeen), kThreads + 1u);
  for (const ThreadSummary& thread : process.threads) {
    if (thread.flags & format::kThreadMain) continue;
    EXPECT_GT(thread.acquisitions, static_cast<uint64_t>(kIterations)) << "tid " << thread.tid;
    EXPECT_EQ(thread.releases, thread.acquisitions) << "tid " << thread.tid;
  }

  // jemalloc's own mutexes (malloc_mutex_t: pthread_mutex_trylock first, pthread_mutex_lock after
  // spinning), initialised by jemalloc itself.
  std::multiset<uint64_t> profiled_counts;
  uint64_t profiled_total = 0, trylock_sites = 0, jemalloc_inits = 0;
  for (const LockSummary& l : process.locks) {
    if (!taken_in_module(process, l, "libjemalloc.so")) continue;
    EXPECT_EQ(l.primitive, Primitive::kMutex);
    profiled_counts.insert(l.acquisitions);
    profiled_total += l.acquisitions;
    if (in_module(process, l.init_site, "libjemalloc.so")) ++jemalloc_inits;
    for (const SiteSummary& site : l.sites)
      if (site.operation == Operation::kTryLock &&
          in_module(process, site.location, "libjemalloc.so"))
        ++trylock_sites;
  }
  ASSERT_FALSE(profiled_counts.empty()) << "no lock taken inside jemalloc";
  EXPECT_GT(trylock_sites, 0u);
  EXPECT_GT(jemalloc_inits, 0u);

  // jemalloc's counters (n_lock_ops of every mutex it profiles, read by the fixture through
  // mallctl after the workers were joined): every operation it counted is in the profile, and each
  // busy mutex (>= 100 operations: the workers' arenas) is one profiled lock with that exact count.
  std::map<std::string, uint64_t> jemalloc_counts;
  std::istringstream lines(profiled.err);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string tag, name;
    uint64_t ops = 0;
    if (fields >> tag >> name >> ops && tag == "jemalloc-mutex") jemalloc_counts[name] = ops;
  }
  ASSERT_FALSE(jemalloc_counts.empty()) << "the fixture printed no jemalloc counters:\n"
                                        << profiled.err;
  uint64_t jemalloc_total = 0;
  std::multiset<uint64_t> unmatched = profiled_counts;
  for (const auto& [name, ops] : jemalloc_counts) {
    jemalloc_total += ops;
    if (ops < 100) continue;
    const auto match = unmatched.find(ops);
    if (match == unmatched.end())
      ADD_FAILURE() << "jemalloc counted " << ops << " lock operations on " << name
                    << ", but no profiled jemalloc lock has that many acquisitions";
    else
      unmatched.erase(match);
  }
  EXPECT_GE(profiled_total, jemalloc_total);
}

// ---------------------------------------------------------------------------------------------
// Debian's CPython: the GIL is a pthread mutex + condvar (take_gil waits on it with a 5 ms
// timeout), and a threading.Lock is a POSIX semaphore (sem_trywait first, sem_wait when it is
// taken).

TEST(RealPrograms, Python3ThreadsShowTheGilCondvarAndExactThreadingLockCounts) {
  const std::string python = "/usr/bin/python3";
  if (!executable(python)) GTEST_SKIP() << python << " not installed (Debian package python3)";
  const CommandResult version =
      run_command({python, "-I", "-c", "import sys; print(sys.version_info >= (3, 13))"});
  ASSERT_EQ(version.exit_status, 0) << version.err;
  if (version.out == "True\n")
    GTEST_SKIP()
        << "CPython 3.13+ implements threading.Lock with its own futex-based PyMutex, not a "
           "POSIX semaphore: this test is written for Debian 12's CPython 3.11";
  constexpr int kThreads = 4;
  constexpr long kIterations = 100000;
  TemporaryDirectory dir;
  const ProcessProfile process = record_program_unchanged(
      dir, {python, "-I", std::string(FIXTURE_SOURCE_DIR) + "/python_threads.py",
            std::to_string(kThreads), std::to_string(kIterations)});
  EXPECT_EQ(process.exit_path, format::ExitPath::kExit);
  EXPECT_EQ(process.exit_status, 0);
  expect_nothing_dropped(process);

  // The main thread and the 4 workers, nothing else (CPython 3.11 starts no helper threads).
  EXPECT_EQ(process.threads.size(), kThreads + 1u);
  EXPECT_EQ(process.counter(format::Counter::kThreadsSeen), kThreads + 1u);

  // The script's threading.Lock: one semaphore, N x M completed waits and as many posts.
  const LockSummary* script_lock = nullptr;
  for (const LockSummary& l : process.locks)
    if (l.primitive == Primitive::kSemaphore &&
        (!script_lock || l.acquisitions > script_lock->acquisitions))
      script_lock = &l;
  ASSERT_NE(script_lock, nullptr) << "no semaphore at all: threading.Lock was not seen";
  const uint64_t with_lock = kThreads * kIterations;
  EXPECT_EQ(script_lock->acquisitions, with_lock);
  EXPECT_EQ(script_lock->events, with_lock);

  // The GIL: a condvar that python3.11 waits on with a timeout and signals; every one of those
  // waits re-takes its mutex, recorded on the mutex as a cond-reacquire at the same call site.
  const LockSummary* gil_cond = nullptr;
  uint64_t timed_waits = 0;
  for (const LockSummary& l : process.locks) {
    if (l.primitive != Primitive::kCondVar || !taken_in_module(process, l, "python3")) continue;
    uint64_t waits = 0;
    for (const SiteSummary& site : l.sites)
      if (site.operation == Operation::kCondTimedWait) waits += site.count;
    if (waits > timed_waits) {
      gil_cond = &l;
      timed_waits = waits;
    }
  }
  ASSERT_NE(gil_cond, nullptr)
      << "no timed condition wait in python3: the GIL's condvar is missing";
  EXPECT_GT(gil_cond->events, 0u) << "the GIL's condvar was never signalled";
  // Named after the global that holds it, which python3 exports: "_PyRuntime+0x188" without
  // debug info, "_PyRuntime.ceval.gil.cond" with (Debian's python3 ships it in python3.11-dbg's
  // build-id files), never an address.
  EXPECT_EQ(gil_cond->name_source, LockNameSource::kSymbol) << gil_cond->name;
  EXPECT_EQ(gil_cond->name.rfind("_PyRuntime", 0), 0u) << gil_cond->name;
  for (const SiteSummary& wait : gil_cond->sites) {
    if (wait.operation != Operation::kCondTimedWait) continue;
    uint64_t reacquired = 0;
    for (const LockSummary& l : process.locks)
      if (l.primitive == Primitive::kMutex)
        for (const SiteSummary& site : l.sites)
          if (site.operation == Operation::kCondReacquire &&
              site.location.module == wait.location.module &&
              site.location.offset == wait.location.offset)
            reacquired += site.count;
    EXPECT_EQ(reacquired, wait.count) << "condition waits at " << wait.location.label;
  }
  // Each re-take that waited is behind some hold, known or not: its blame rows add up to its
  // waits (those whose holder was not known had no row, and the text's shares fell short).
  for (const LockSummary& l : process.locks)
    for (const SiteSummary& site : l.sites) {
      if (site.operation != Operation::kCondReacquire) continue;
      uint64_t waits = 0, wait_ns = 0;
      for (const Blame& row : site.blame) {
        waits += row.waits;
        wait_ns += row.wait_ns;
      }
      EXPECT_EQ(waits, site.contended) << site.location.label;
      EXPECT_EQ(wait_ns, site.wait_sum_ns) << site.location.label;
    }
}

// ---------------------------------------------------------------------------------------------
// memcached: 4 worker threads under a bounded load on 127.0.0.1, stopped with SIGTERM (memcached
// handles it: it leaves its event loop and returns from main, so the profile is written).

uint16_t free_local_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    throw std::runtime_error("cannot find a free port on 127.0.0.1");
  close(fd);
  return ntohs(address.sin_port);
}

pid_t parent_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t after_name = stat.rfind(')');
  if (after_name == std::string::npos) return -1;
  std::istringstream fields(stat.substr(after_name + 2));
  char state = 0;
  pid_t ppid = -1;
  fields >> state >> ppid;
  return ppid;
}

// `lockscope record -- SERVER ... -P PID_FILE` in the background. On destruction whatever still
// runs is killed (the server by the pid in its pid file, then lockscope is reaped), so a failed
// assertion leaves no server behind.
class RecordedServer {
 public:
  RecordedServer(const std::vector<std::string>& command, const std::string& pid_file,
                 const TemporaryDirectory& capture)
      : started_(start_command(command, capture, "record")), pid_file_(pid_file) {}
  ~RecordedServer() {
    if (done_) return;
    if (server_pid(20) > 0) kill(server_, SIGKILL);
    int status = 0;
    if (!wait_for(std::chrono::seconds(5), &status)) {
      kill(started_.pid, SIGKILL);
      waitpid(started_.pid, &status, 0);
    }
  }
  RecordedServer(const RecordedServer&) = delete;
  RecordedServer& operator=(const RecordedServer&) = delete;

  // The server's pid from its pid file, once it is there (10 ms per attempt); only a child of our
  // lockscope counts.
  pid_t server_pid(int attempts = 500) {
    for (int attempt = 0; attempt < attempts && server_ <= 0; ++attempt) {
      const pid_t pid = static_cast<pid_t>(std::atol(slurp(pid_file_).c_str()));
      if (pid > 0 && parent_of(pid) == started_.pid)
        server_ = pid;
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return server_;
  }

  bool wait_for(std::chrono::milliseconds limit, int* status) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      const pid_t ended = waitpid(started_.pid, status, WNOHANG);
      if (ended == started_.pid) {
        done_ = true;
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  CommandResult result(int status) const { return finish_command(started_, status); }

 private:
  StartedCommand started_;
  std::string pid_file_;
  pid_t server_ = -1;
  bool done_ = false;
};

std::map<std::string, uint64_t> parse_stats(const std::string& out) {
  std::map<std::string, uint64_t> stats;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string tag, name;
    uint64_t value = 0;
    if (fields >> tag >> name >> value && tag == "stat") stats[name] = value;
  }
  return stats;
}

TEST(RealPrograms, MemcachedUnderBoundedLoadIsProfiledOnItsWorkerThreads) {
  const std::string memcached = "/usr/bin/memcached";
  if (!executable(memcached))
    GTEST_SKIP() << memcached << " not installed (Debian package memcached)";
  constexpr int kWorkers = 4;       // memcached -t: worker threads; one client connection each
  constexpr long kRequests = 5000;  // per connection: this many sets, then as many gets
  TemporaryDirectory dir, capture;
  const std::string pid_file = capture / "memcached.pid";
  const std::string port = std::to_string(free_local_port());
  std::vector<std::string> server = {
      memcached, "-t",    std::to_string(kWorkers), "-p", port, "-U", "0", "-l", "127.0.0.1",
      "-P",      pid_file};
  if (geteuid() == 0) server.insert(server.end(), {"-u", "root"});  // refuses root without -u
  RecordedServer recorded(record_command(dir, server), pid_file, capture);

  // The client retries connecting while memcached starts; it checks every reply.
  const CommandResult load = run_command(
      {fixture("memcached_load"), port, std::to_string(kWorkers), std::to_string(kRequests)});
  ASSERT_EQ(load.exit_status, 0) << load.out << load.err;
  const std::map<std::string, uint64_t> stats = parse_stats(load.out);
  const uint64_t sent = kWorkers * kRequests;
  EXPECT_EQ(stats.count("cmd_set") ? stats.at("cmd_set") : 0, sent) << load.out;
  EXPECT_EQ(stats.count("cmd_get") ? stats.at("cmd_get") : 0, sent) << load.out;
  EXPECT_EQ(stats.count("get_hits") ? stats.at("get_hits") : 0, sent) << load.out;

  const pid_t pid = recorded.server_pid();
  ASSERT_GT(pid, 0) << "memcached wrote no pid file";
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_TRUE(recorded.wait_for(std::chrono::seconds(10), &status))
      << "memcached did not stop within 10 s of SIGTERM";
  const CommandResult ended = recorded.result(status);
  if (ended.signal == SIGTERM && profile_files(dir.path()).empty())
    GTEST_SKIP()
        << "memcached died of SIGTERM instead of exiting, and the runtime writes no profile "
           "for a process killed by a signal (docs/runtime.md, What is not seen)";
  ASSERT_EQ(ended.exit_status, 0) << "memcached's SIGTERM handler exits 0\n" << ended.err;

  const Profile profile = load_profile(dir.path());
  EXPECT_TRUE(profile.problems.empty());
  ASSERT_EQ(profile.processes.size(), 1u);
  const ProcessProfile& process = profile.processes[0];
  EXPECT_EQ(process.exit_path, format::ExitPath::kExit);
  EXPECT_EQ(process.exit_status, 0);
  expect_nothing_dropped(process);

  // Every request ran on the worker of its connection and took at least one lock there.
  int workers = 0;
  uint64_t worker_acquisitions = 0;
  for (const ThreadSummary& thread : process.threads) {
    if (thread.name != "mc-worker") continue;
    ++workers;
    worker_acquisitions += thread.acquisitions;
    EXPECT_GE(thread.acquisitions, 2u * kRequests) << "worker tid " << thread.tid;
  }
  EXPECT_EQ(workers, kWorkers);
  EXPECT_GE(worker_acquisitions, stats.at("cmd_set") + stats.at("cmd_get"));
}

}  // namespace
}  // namespace lockscope::testing
