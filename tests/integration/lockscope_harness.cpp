#include "lockscope_harness.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "analysis/profile_reader.h"
#include "analysis/profile_symbolization.h"

extern char** environ;

namespace lockscope::testing {
namespace fs = std::filesystem;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

StartedCommand start_command(const std::vector<std::string>& argv,
                             const TemporaryDirectory& capture, const std::string& tag,
                             const std::vector<std::string>* environment) {
  StartedCommand started{-1, capture / (tag + ".out"), capture / (tag + ".err")};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, started.out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, started.err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args, envp;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  if (environment) {
    for (const std::string& e : *environment) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
  const int spawned = posix_spawn(&started.pid, args[0], &actions, nullptr, args.data(),
                                  environment ? envp.data() : environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw std::runtime_error("posix_spawn failed for " + argv[0]);
  return started;
}

CommandResult finish_command(const StartedCommand& started, int status) {
  CommandResult result;
  if (WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.out = slurp(started.out_path);
  result.err = slurp(started.err_path);
  return result;
}

CommandResult kill_when_ready(const StartedCommand& started, int after_ms, int* pid_out) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int pid = 0;
  while (std::chrono::steady_clock::now() < deadline &&
         std::sscanf(slurp(started.out_path).c_str(), "ready %d", &pid) != 1)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  *pid_out = pid;
  if (pid <= 0) return {};
  std::this_thread::sleep_for(std::chrono::milliseconds(after_ms));
  kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(started.pid, &status, 0) < 0 && errno == EINTR) {
  }
  return finish_command(started, status);
}

TerminalCommand start_on_terminal(const std::vector<std::string>& argv,
                                  const TemporaryDirectory& capture, bool stderr_on_terminal) {
  TerminalCommand command;
  command.terminal = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (command.terminal < 0 || grantpt(command.terminal) != 0 || unlockpt(command.terminal) != 0)
    throw std::runtime_error("no pseudo-terminal: " + std::generic_category().message(errno));
  const std::string terminal_path = ptsname(command.terminal);
  if (!stderr_on_terminal) command.err_path = capture / "terminal.err";
  // Everything the child needs is made before fork: after it, only async-signal-safe calls.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  command.pid = fork();
  if (command.pid < 0) throw std::runtime_error("fork failed");
  if (command.pid == 0) {
    // A new session; its first terminal opened becomes its controlling terminal, and the
    // session's process group (this one) its foreground group.
    setsid();
    const int slave = open(terminal_path.c_str(), O_RDWR);
    if (slave < 0) _exit(120);
    dup2(slave, 0);
    dup2(slave, 1);
    if (stderr_on_terminal) {
      dup2(slave, 2);
    } else {
      const int err = open(command.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(err, 2);
    }
    execv(args[0], args.data());
    _exit(127);
  }
  fcntl(command.terminal, F_SETFL, fcntl(command.terminal, F_GETFL) | O_NONBLOCK);
  return command;
}

void watch_terminal(TerminalCommand& command, int ms, const std::string& until) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < deadline) {
    char buffer[4096];
    const ssize_t n = read(command.terminal, buffer, sizeof(buffer));
    if (n > 0) {
      command.shown.append(buffer, static_cast<size_t>(n));
      if (!until.empty() && command.shown.find(until) != std::string::npos) return;
      continue;
    }
    // EAGAIN: nothing yet; EIO: every descriptor of the terminal's other side is closed.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void type_on_terminal(const TerminalCommand& command, const std::string& keys) {
  if (write(command.terminal, keys.data(), keys.size()) != static_cast<ssize_t>(keys.size()))
    ADD_FAILURE() << "typing on the terminal failed: " << std::generic_category().message(errno);
}

CommandResult finish_on_terminal(TerminalCommand& command, double timeout_s, bool* timed_out) {
  *timed_out = false;
  int status = 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(int(timeout_s * 1000));
  for (;;) {
    watch_terminal(command, 20);
    const pid_t ended = waitpid(command.pid, &status, WNOHANG);
    if (ended == command.pid || (ended < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(command.pid, SIGKILL);
      while (waitpid(command.pid, &status, 0) < 0 && errno == EINTR) {
      }
      *timed_out = true;
      break;
    }
  }
  watch_terminal(command, 50);  // what it showed last
  close(command.terminal);
  command.terminal = -1;
  CommandResult result;
  if (WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.out = command.shown;
  if (!command.err_path.empty()) result.err = slurp(command.err_path);
  return result;
}

CommandResult run_command(const std::vector<std::string>& argv,
                          const std::vector<std::string>* environment) {
  TemporaryDirectory capture;
  const StartedCommand started = start_command(argv, capture, "command", environment);
  int status = 0;
  while (waitpid(started.pid, &status, 0) < 0 && errno == EINTR) {
  }
  return finish_command(started, status);
}

BoundedResult run_lockscope_bounded(const std::vector<std::string>& args, double timeout_s) {
  std::vector<std::string> argv = {LOCKSCOPE_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  TemporaryDirectory capture;
  const auto start = std::chrono::steady_clock::now();
  const StartedCommand started = start_command(argv, capture, "bounded");
  BoundedResult bounded;
  int status = 0;
  struct rusage usage {};
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  for (;;) {
    const pid_t ended = wait4(started.pid, &status, WNOHANG, &usage);
    if (ended == started.pid || (ended < 0 && errno != EINTR)) break;
    if (elapsed() > timeout_s) {
      kill(started.pid, SIGKILL);
      while (wait4(started.pid, &status, 0, &usage) < 0 && errno == EINTR) {
      }
      bounded.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  bounded.seconds = elapsed();
  bounded.max_rss_bytes = static_cast<uint64_t>(usage.ru_maxrss) * 1024;
  bounded.result = finish_command(started, status);
  return bounded;
}

CommandResult run_lockscope(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {LOCKSCOPE_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv);
}

std::string fixture(const std::string& name) {
  return std::string(FIXTURE_BINARY_DIR) + "/fixture_" + name;
}

std::string fixture_source(const std::string& name) {
  return std::string(FIXTURE_SOURCE_DIR) + "/" + name + ".c";
}

int marker_line(const std::string& fixture_name, const std::string& marker) {
  std::ifstream in(fixture_source(fixture_name));
  std::string line;
  for (int number = 1; std::getline(in, line); ++number)
    if (line.find("// @" + marker) != std::string::npos) return number;
  throw std::runtime_error("marker @" + marker + " not found in " + fixture_name);
}

TemporaryDirectory::TemporaryDirectory() {
  std::string pattern = (fs::temp_directory_path() / "lockscope-test-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TemporaryDirectory::~TemporaryDirectory() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

Profile load_profile(const std::string& directory) {
  Profile profile = read_profile_directory(directory);
  symbolize_profile(profile);
  return profile;
}

std::vector<std::string> profile_files(const std::string& directory) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(directory))
    if (entry.path().extension() == ".lsprof") files.push_back(entry.path().string());
  return files;
}

bool located_at(const CodeLocation& where, const std::string& file_suffix, int line) {
  return where.line == line && where.file.size() >= file_suffix.size() &&
         where.file.compare(where.file.size() - file_suffix.size(), file_suffix.size(),
                            file_suffix) == 0;
}

const LockSummary* lock_acquired_at(const ProcessProfile& process, const std::string& file_suffix,
                                    int line) {
  for (const LockSummary& lock : process.locks)
    for (const SiteSummary& site : lock.sites)
      if (site.operation != format::Operation::kUnlock &&
          located_at(site.location, file_suffix, line))
        return &lock;
  return nullptr;
}

const SiteSummary* site_at(const LockSummary& lock, const std::string& file_suffix, int line,
                           format::Operation op) {
  for (const SiteSummary& site : lock.sites)
    if (site.operation == op && located_at(site.location, file_suffix, line)) return &site;
  return nullptr;
}

Profile record_all_unchanged(const TemporaryDirectory& dir, const std::vector<std::string>& program,
                             const std::vector<std::string>* environment,
                             CommandResult* recorded_out,
                             const std::vector<std::string>& record_options) {
  const CommandResult plain = run_command(program, environment);
  EXPECT_EQ(plain.exit_status, 0) << plain.out << plain.err;
  std::vector<std::string> command = {LOCKSCOPE_CLI, "record", "-o", dir.path()};
  command.insert(command.end(), record_options.begin(), record_options.end());
  command.push_back("--");
  command.insert(command.end(), program.begin(), program.end());
  const CommandResult recorded = run_command(command, environment);
  EXPECT_EQ(recorded.exit_status, plain.exit_status) << recorded.out << recorded.err;
  EXPECT_EQ(recorded.signal, 0)
      << "14 is SIGALRM: the fixture's watchdog, it hung under the runtime";
  EXPECT_EQ(recorded.out, plain.out);
  if (recorded_out) *recorded_out = recorded;
  Profile profile = load_profile(dir.path());
  EXPECT_TRUE(profile.problems.empty());
  return profile;
}

std::vector<std::string> record_options_for(const std::string& mode) {
  return mode == "trace" ? std::vector<std::string>{"--trace"} : std::vector<std::string>{};
}

ProcessProfile record_program_unchanged(const TemporaryDirectory& dir,
                                        const std::vector<std::string>& program,
                                        const std::vector<std::string>* environment,
                                        CommandResult* recorded_out,
                                        const std::vector<std::string>& record_options) {
  Profile profile = record_all_unchanged(dir, program, environment, recorded_out, record_options);
  if (profile.processes.size() != 1) {
    ADD_FAILURE() << "expected one process, got " << profile.processes.size();
    return {};
  }
  return profile.processes[0];
}

ProcessProfile record_unchanged(const TemporaryDirectory& dir, const std::string& fixture_name,
                                const std::vector<std::string>& args,
                                const std::vector<std::string>& record_options) {
  std::vector<std::string> program = {fixture(fixture_name)};
  program.insert(program.end(), args.begin(), args.end());
  return record_program_unchanged(dir, program, nullptr, nullptr, record_options);
}

FoundSite find_site(const ProcessProfile& process, const std::string& fixture_name,
                    const std::string& marker, format::Operation op) {
  const int line = marker_line(fixture_name, marker);
  for (const LockSummary& lock : process.locks)
    for (const SiteSummary& site : lock.sites)
      if (site.operation == op && located_at(site.location, fixture_name + ".c", line))
        return {&lock, &site};
  return {};
}

const SiteSummary* site_of(const LockSummary& lock, const std::string& fixture_name,
                           const std::string& marker, format::Operation op) {
  return site_at(lock, fixture_name + ".c", marker_line(fixture_name, marker), op);
}

uint64_t most_waited(const ProcessProfile& process, format::Primitive primitive) {
  uint64_t most = 0;
  for (const ThreadSummary& thread : process.threads)
    most = std::max(most, thread.wait_ns_by_primitive[static_cast<size_t>(primitive)]);
  return most;
}

void expect_wrapped_locks_stack(const std::vector<CodeLocation>& frames,
                                const std::string& innermost) {
  ASSERT_GE(frames.size(), 4u);
  const std::string levels[] = {innermost, "level2", "level1", "worker"};
  for (size_t i = 0; i < 4; ++i)
    EXPECT_TRUE(located_at(frames[i], "wrapped_locks.c", marker_line("wrapped_locks", levels[i])))
        << "frame " << i << ": " << frames[i].label;
}

}  // namespace lockscope::testing
