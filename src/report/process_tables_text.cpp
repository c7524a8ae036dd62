#include "report/process_tables_text.h"

#include <fmt/core.h>
#include <string.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "analysis/duration_format.h"
#include "analysis/weighted_stacks.h"
#include "report/text_table.h"

namespace lockscope {
namespace {

const char* kBucketHeaders[] = {"≤1µs", "≤10µs", "≤100µs", "≤1ms", ">1ms"};

std::string command_text(const ProcessProfile& process) {
  std::string text;
  for (const std::string& argument : process.arguments) {
    if (!text.empty()) text += ' ';
    text += argument;
  }
  // A process that rewrote its arguments in place (nginx's "nginx: worker process", postgres's
  // "postgres: checkpointer") pads them with spaces or empty ones to the old length.
  while (!text.empty() && text.back() == ' ') text.pop_back();
  if (text.size() > 60) {  // cut at a character's start, never inside a UTF-8 sequence
    size_t cut = 57;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut) + "...";
  }
  return text.empty() ? process.executable : text;
}

std::string exit_text(const ProcessProfile& process) {
  if (process.exit_path == format::ExitPath::kExec) return "exec";
  if (process.exit_path == format::ExitPath::kSignal) {
    const char* name = sigabbrev_np(process.exit_status);
    return name ? fmt::format("SIG{}", name) : fmt::format("signal {}", process.exit_status);
  }
  if (process.exit_status < 0) return exit_path_name(process.exit_path);
  return fmt::format("{} {}", exit_path_name(process.exit_path), process.exit_status);
}

// Waits that are not lock waits, one column per kind present in the profile: never summed into
// the lock wait columns.
struct OtherWaitColumn {
  format::Primitive primitive;
  const char* header;
};
constexpr OtherWaitColumn kOtherWaitColumns[] = {
    {format::Primitive::kSpinLock, "SPIN (CPU)"},
    {format::Primitive::kCondVar, "COND WAIT"},
    {format::Primitive::kSemaphore, "SEM WAIT"},
    {format::Primitive::kBarrier, "BARRIER WAIT"},
};

struct ListedThread {
  const ProcessProfile* process;
  const ThreadSummary* thread;
};

// The threads to list: with --all every one, in the profile's order; else the top --top by lock
// wait (ties: more acquisitions first), in that order.
std::vector<ListedThread> listed_threads(const Profile& profile, const ReportOptions& options,
                                         size_t& total) {
  std::vector<ListedThread> threads;
  for (const ProcessProfile& process : profile.processes)
    for (const ThreadSummary& thread : process.threads) threads.push_back({&process, &thread});
  total = threads.size();
  if (options.all || threads.size() <= options.top) return threads;
  std::stable_sort(threads.begin(), threads.end(),
                   [](const ListedThread& a, const ListedThread& b) {
                     if (a.thread->wait_sum_ns != b.thread->wait_sum_ns)
                       return a.thread->wait_sum_ns > b.thread->wait_sum_ns;
                     return a.thread->acquisitions > b.thread->acquisitions;
                   });
  threads.resize(options.top);
  return threads;
}

// "and 98 more processes that took no lock (--all lists them): sh ×40, cc1 ×30, ..." by the
// base name of their executables, the most frequent first.
std::string lock_free_line(const std::vector<const ProcessProfile*>& processes) {
  std::map<std::string, size_t> by_name;
  for (const ProcessProfile* process : processes)
    ++by_name[std::filesystem::path(process->executable).filename().string()];
  std::vector<std::pair<std::string, size_t>> names(by_name.begin(), by_name.end());
  std::stable_sort(names.begin(), names.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text = fmt::format("and {} more processes that took no lock (--all lists them):",
                                 format_count(processes.size()));
  for (size_t i = 0; i < names.size() && i < 6; ++i)
    text += fmt::format("{} {}{}", i ? "," : "", names[i].first.empty() ? "?" : names[i].first,
                        names[i].second > 1 ? fmt::format(" ×{}", names[i].second) : "");
  if (names.size() > 6) text += fmt::format(", {} other names", names.size() - 6);
  return text + "\n";
}

}  // namespace

std::string share_of_run(uint64_t ns, uint64_t run_ns) {
  if (run_ns == 0) return "";
  const double percent = 100.0 * double(ns) / double(run_ns);
  if (ns > 0 && percent < 0.1) return "<0.1%";
  return fmt::format("{:.1f}%", percent);
}

namespace {

struct ProcessFigures {
  uint64_t active_locks = 0, acquired = 0, contended = 0, wait_ns = 0;
};

ProcessFigures figures_of(const ProcessProfile& process) {
  ProcessFigures figures;
  for (const LockSummary& lock : process.locks)
    if (lock.acquisitions + lock.failed + lock.events) ++figures.active_locks;
  // Its threads' figures added up, so that the two tables agree: acquisitions and contended ones
  // of every lock kind a thread holds afterwards (spinlocks too), lock waits on mutexes and
  // rwlocks (spinning and the other kinds of wait have columns of their own).
  for (const ThreadSummary& thread : process.threads) {
    figures.acquired += thread.acquisitions;
    figures.contended += thread.contended;
    figures.wait_ns += thread.wait_sum_ns;
  }
  return figures;
}

// A build's hundreds of compilers and shells took no lock: without --all they are one line under
// the table, by name. Listed whatever they did: the first process, and one that ended otherwise
// than by exit status 0 or an exec (a compiler's error in `make -j` may explain the run).
bool foldable(const Profile& profile, const ProcessProfile& process) {
  const ProcessFigures figures = figures_of(process);
  const bool ended_well = process.exit_path == format::ExitPath::kExec ||
                          ((process.exit_path == format::ExitPath::kExit ||
                            process.exit_path == format::ExitPath::kUnderscoreExit) &&
                           process.exit_status == 0);
  return figures.active_locks == 0 && figures.acquired == 0 && ended_well &&
         &process != &profile.processes.front();
}

}  // namespace

void write_processes(const Profile& profile, const ReportOptions& options, std::ostream& out) {
  out << "*** processes present ***\n";
  TextTable table;
  table.set_header({"PID", "PPID", "ENDED BY", "DURATION", "THREADS", "LOCKS", "ACQUIRED",
                    "CONTENDED", "LOCK WAIT", "OF RUN", "COMMAND"},
                   {false, false, true, false, false, false, false, false, false, false, true});
  std::vector<const ProcessProfile*> lock_free;
  if (!options.all)
    for (const ProcessProfile& process : profile.processes)
      if (foldable(profile, process)) lock_free.push_back(&process);
  if (lock_free.size() == 1) lock_free.clear();  // one is a row, not a line
  size_t next_folded = 0;                        // lock_free is in the processes' order
  for (const ProcessProfile& process : profile.processes) {
    if (next_folded < lock_free.size() && lock_free[next_folded] == &process) {
      ++next_folded;
      continue;
    }
    const ProcessFigures figures = figures_of(process);
    table.add_row({fmt::format("{}", process.pid), fmt::format("{}", process.ppid),
                   exit_text(process), format_duration_ns(double(process.duration_ns)),
                   fmt::format("{}", process.threads.size()), format_count(figures.active_locks),
                   format_count(figures.acquired), format_count(figures.contended),
                   format_duration_ns(double(figures.wait_ns)),
                   share_of_run(figures.wait_ns, process.duration_ns), command_text(process)});
  }
  table.write(out);
  if (!lock_free.empty()) out << lock_free_line(lock_free);
  out << '\n';
}

void write_threads(const Profile& profile, const ReportOptions& options, std::ostream& out) {
  size_t total = 0;
  const std::vector<ListedThread> threads = listed_threads(profile, options, total);
  if (threads.size() < total)
    out << fmt::format("*** threads present: {} of {} by LOCK WAIT ***\n", threads.size(),
                       format_count(total));
  else
    out << "*** threads present ***\n";
  std::vector<OtherWaitColumn> others;
  bool any_last_arrival = false;
  for (const OtherWaitColumn& column : kOtherWaitColumns) {
    bool present = false;
    for (const ListedThread& listed : threads) {
      present |= listed.thread->wait_ns_by_primitive[static_cast<size_t>(column.primitive)] > 0;
      any_last_arrival |= listed.thread->barrier_last_arrivals > 0;
    }
    if (present) others.push_back(column);
  }
  TextTable table;
  std::vector<std::string> header = {"PID",      "TID",       "NAME",  "ACQUIRED",
                                     "RELEASED", "CONTENDED", "FAILED"};
  for (const char* h : kBucketHeaders) header.push_back(h);
  header.insert(header.end(), {"LOCK WAIT", "OF RUN", "WAIT MAX"});
  for (const OtherWaitColumn& column : others) header.push_back(column.header);
  if (any_last_arrival) header.push_back("LAST AT BARRIER");
  std::vector<bool> left(header.size(), false);
  left[2] = true;
  table.set_header(header, left);
  for (const auto& [process, thread] : threads) {
    std::string name = thread->name.empty() ? "?" : thread->name;
    if (thread->flags & format::kThreadMain) name += " (main)";
    std::vector<std::string> row = {fmt::format("{}", process->pid),
                                    fmt::format("{}", thread->tid),
                                    name,
                                    format_count(thread->acquisitions),
                                    format_count(thread->releases),
                                    format_count(thread->contended),
                                    format_count(thread->failed)};
    for (uint64_t bucket : report_buckets(thread->wait)) row.push_back(format_count(bucket));
    row.push_back(format_duration_ns(double(thread->wait_sum_ns)));
    row.push_back(share_of_run(thread->wait_sum_ns, process->duration_ns));
    row.push_back(format_duration_ns(double(thread->wait_max_ns)));
    for (const OtherWaitColumn& column : others)
      row.push_back(format_duration_ns(
          double(thread->wait_ns_by_primitive[static_cast<size_t>(column.primitive)])));
    if (any_last_arrival) row.push_back(format_count(thread->barrier_last_arrivals));
    table.add_row(std::move(row));
  }
  table.write(out);
  if (threads.size() < total)
    out << fmt::format("({} more thread{}: --top N lists more, --all every one)\n",
                       format_count(total - threads.size()),
                       total - threads.size() == 1 ? "" : "s");
  out << '\n';
}

}  // namespace lockscope
