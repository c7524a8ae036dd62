// Shared helpers of the integration tests: run a command and capture its output and end, make a
// temporary directory, find a fixture's marked line, load a profile the way `lockscope report`
// does.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "analysis/profile_model.h"

namespace lockscope::testing {

struct CommandResult {
  int exit_status = -1;  // when the command exited
  int signal = 0;        // when it was killed by a signal
  std::string out;
  std::string err;
};

class TemporaryDirectory;

// Runs a command to its end, stdin from /dev/null, stdout and stderr captured; `environment`
// replaces the test's own when given.
CommandResult run_command(const std::vector<std::string>& argv,
                          const std::vector<std::string>* environment = nullptr);
// `lockscope ARGS...` with the CLI under test.
CommandResult run_lockscope(const std::vector<std::string>& args);

// `lockscope ARGS...`, killed with SIGKILL when it has not ended within `timeout_s` (a hang is
// then a failed test, not a stuck suite): `timed_out`, its wall time and its peak resident size.
struct BoundedResult {
  CommandResult result;
  bool timed_out = false;
  double seconds = 0;
  uint64_t max_rss_bytes = 0;  // getrusage's ru_maxrss of the command (wait4)
};
BoundedResult run_lockscope_bounded(const std::vector<std::string>& args, double timeout_s);

std::string fixture(const std::string& name);         // path of a fixture binary
std::string fixture_source(const std::string& name);  // path of its .c file
// Line of the fixture source that carries the comment marker "// @marker".
int marker_line(const std::string& fixture_name, const std::string& marker);

class TemporaryDirectory {
 public:
  TemporaryDirectory();
  ~TemporaryDirectory();
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A command started in the background (stdin /dev/null, stdout and stderr to files named after
// `tag` in `capture`); finish_command() collects its end once the caller has waited for it.
struct StartedCommand {
  pid_t pid = -1;
  std::string out_path, err_path;
};
StartedCommand start_command(const std::vector<std::string>& argv,
                             const TemporaryDirectory& capture, const std::string& tag,
                             const std::vector<std::string>* environment = nullptr);
CommandResult finish_command(const StartedCommand& started, int status);
// Waits (up to 10 s) until the started command's stdout says "ready PID", lets it run
// `after_ms` more, kills PID with SIGKILL and collects the command's end. pid_out: PID (0 when
// it never said ready; then nothing is killed and the command is left running).
CommandResult kill_when_ready(const StartedCommand& started, int after_ms, int* pid_out);
std::string slurp(const std::string& path);  // a whole file ("" when unreadable)

// A command started in a session of its own whose controlling terminal is a new pseudo-terminal,
// as a shell's foreground job: stdin and stdout are the terminal (stderr too when
// `stderr_on_terminal`, else a file in `capture`), and its process group the terminal's
// foreground group, so that typing Ctrl-C sends SIGINT to the command and to every process it
// starts, from the kernel, as a terminal does.
struct TerminalCommand {
  pid_t pid = -1;
  int terminal = -1;     // the pseudo-terminal's master side: what is shown, what is typed
  std::string err_path;  // "" when stderr is the terminal
  std::string shown;     // what the terminal has shown so far (with its \r\n line ends)
};
TerminalCommand start_on_terminal(const std::vector<std::string>& argv,
                                  const TemporaryDirectory& capture, bool stderr_on_terminal);
// Reads what the terminal shows for `ms` milliseconds (or until `until` shows, when given).
void watch_terminal(TerminalCommand& command, int ms, const std::string& until = "");
void type_on_terminal(const TerminalCommand& command, const std::string& keys);  // "\x03": Ctrl-C
// Waits up to `timeout_s` for the command's end, reading the terminal meanwhile; a command still
// running then is killed (SIGKILL) and `timed_out` set. `out` is what the terminal showed.
CommandResult finish_on_terminal(TerminalCommand& command, double timeout_s, bool* timed_out);

Profile load_profile(const std::string& directory);  // read + symbolize
std::vector<std::string> profile_files(const std::string& directory);

inline constexpr uint64_t kMs = 1'000'000;

// Runs `program` plain, then under `lockscope record` into `dir` (with `environment` when given):
// exit status 0 and the same stdout both times, no signal, a profile without problems; returns it.
// `recorded` gets the recorded run's result.
// `record_options` go to `lockscope record` before the "--".
Profile record_all_unchanged(const TemporaryDirectory& dir, const std::vector<std::string>& program,
                             const std::vector<std::string>* environment = nullptr,
                             CommandResult* recorded = nullptr,
                             const std::vector<std::string>& record_options = {});
// The same for a program that is one process: returns that process.
ProcessProfile record_program_unchanged(const TemporaryDirectory& dir,
                                        const std::vector<std::string>& program,
                                        const std::vector<std::string>* environment = nullptr,
                                        CommandResult* recorded = nullptr,
                                        const std::vector<std::string>& record_options = {});
// The `lockscope record` options of a test run in `mode`: "trace" (--trace) or "summary" (none).
std::vector<std::string> record_options_for(const std::string& mode);
// The same for a fixture with its arguments.
ProcessProfile record_unchanged(const TemporaryDirectory& dir, const std::string& fixture_name,
                                const std::vector<std::string>& args = {},
                                const std::vector<std::string>& record_options = {});

// True when `where` is at line `line` of a file whose path ends with `file_suffix`.
bool located_at(const CodeLocation& where, const std::string& file_suffix, int line);
// A call stack of the wrapped_locks fixture: its innermost frame at the line of `innermost` (a
// marker: the lock or the unlock), then the three wrappers and the thread function, each at the
// line of its call.
void expect_wrapped_locks_stack(const std::vector<CodeLocation>& frames,
                                const std::string& innermost);

struct FoundSite {
  const LockSummary* lock = nullptr;
  const SiteSummary* site = nullptr;
};
// The (lock, site) with operation `op` at the "// @marker" line of `fixture_name`.c.
FoundSite find_site(const ProcessProfile& process, const std::string& fixture_name,
                    const std::string& marker, format::Operation op);
// The site of `lock` with operation `op` at the marker's line.
const SiteSummary* site_of(const LockSummary& lock, const std::string& fixture_name,
                           const std::string& marker, format::Operation op);
// The largest wait of that kind over the process's threads.
uint64_t most_waited(const ProcessProfile& process, format::Primitive primitive);

// The lock of `process` with an acquire site at fixture:line; nullptr when none.
const LockSummary* lock_acquired_at(const ProcessProfile& process, const std::string& file_suffix,
                                    int line);
// The site of `lock` at fixture:line with operation `op`; nullptr when none.
const SiteSummary* site_at(const LockSummary& lock, const std::string& file_suffix, int line,
                           format::Operation op);

// The text report's notes as one line each: a note longer than the report's 120 columns goes on
// in lines indented 6 spaces (report/footer_text.cpp), joined again here with a space. (A call
// stack's frames are indented 6 spaces too: search the result for notes only.)
inline std::string unwrapped_notes(const std::string& text) {
  std::string joined;
  joined.reserve(text.size());
  for (size_t at = 0; at < text.size(); ++at) {
    if (text.compare(at, 7, "\n      ") == 0) {
      joined += ' ';
      at += 6;
    } else {
      joined += text[at];
    }
  }
  return joined;
}

}  // namespace lockscope::testing
