#include "report/process_tables_text.h"

#include <fmt/core.h>
#include <string.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "analysis/duration_format.h"
#include "analysis/weighted_stacks.h"
#include "report/stack_ids.h"
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

void write_processes(const ProfileViews& views, const ReportOptions& options, std::ostream& out) {
  out << "*** processes present ***\n";
  TextTable table;
  table.set_header({"PID", "PPID", "ENDED BY", "DURATION", "THREADS", "LOCKS", "ACQUIRED",
                    "CONTENDED", "LOCK WAIT", "OF RUN", "COMMAND"},
                   {false, false, true, false, false, false, false, false, false, false, true});
  std::vector<const ProcessProfile*> lock_free;
  if (!options.all)
    for (const ProcessView& view : views.processes())
      if (view.took_no_lock) lock_free.push_back(view.process);
  if (lock_free.size() == 1) lock_free.clear();  // one is a row, not a line
  size_t next_folded = 0;                        // lock_free is in the processes' order
  for (const ProcessView& view : views.processes()) {
    const ProcessProfile& process = *view.process;
    if (next_folded < lock_free.size() && lock_free[next_folded] == &process) {
      ++next_folded;
      continue;
    }
    table.add_row({fmt::format("{}", process.pid), fmt::format("{}", process.ppid),
                   exit_text(process), format_duration_ns(double(process.duration_ns)),
                   fmt::format("{}", process.threads.size()), format_count(view.used_locks),
                   format_count(view.acquired), format_count(view.contended),
                   format_duration_ns(double(view.blocked_wait_ns)),
                   share_of_run(view.blocked_wait_ns, process.duration_ns), command_text(process)});
  }
  if (!options.wide) table.fit_within(kReportWidth, 10, CellFit::kCutEnd);
  table.write(out);
  if (!lock_free.empty()) out << lock_free_line(lock_free);
  out << '\n';
}

namespace {

// The threads table's columns, one row each. The default table fits 120 columns: the wait buckets
// (40 columns whose tail WAIT MAX sums up), RELEASED (ACQUIRED but for locks still held at exit)
// and FAILED (in the call sites' table, where it happens) are --wide's. The other kinds of wait
// have a column only where some listed thread has one: they are never added to LOCK WAIT.
struct ThreadColumn {
  std::string header;
  bool left_aligned = false;
  bool wide_only = false;
  std::function<std::string(const ProcessProfile&, const ThreadSummary&)> text;
  std::function<bool(const ThreadSummary&)> present = nullptr;  // null: always shown
};

std::vector<ThreadColumn> build_thread_columns() {
  using Text = std::function<std::string(const ProcessProfile&, const ThreadSummary&)>;
  auto count = [](uint64_t ThreadSummary::*field) -> Text {
    return
        [field](const ProcessProfile&, const ThreadSummary& t) { return format_count(t.*field); };
  };
  std::vector<ThreadColumn> columns = {
      {"PID", false, false,
       [](const ProcessProfile& p, const ThreadSummary&) { return fmt::format("{}", p.pid); }},
      {"TID", false, false,
       [](const ProcessProfile&, const ThreadSummary& t) { return fmt::format("{}", t.tid); }},
      {"NAME", true, false,
       [](const ProcessProfile&, const ThreadSummary& t) {
         std::string name = t.name.empty() ? "?" : t.name;
         return (t.flags & format::kThreadMain) ? name + " (main)" : name;
       }},
      {"ACQUIRED", false, false, count(&ThreadSummary::acquisitions)},
      {"RELEASED", false, true, count(&ThreadSummary::releases)},
      {"CONTENDED", false, false, count(&ThreadSummary::contended)},
      {"FAILED", false, true, count(&ThreadSummary::failed)},
  };
  for (size_t i = 0; i < 5; ++i)
    columns.push_back(
        {kBucketHeaders[i], false, true, [i](const ProcessProfile&, const ThreadSummary& t) {
           return format_count(report_buckets(t.wait)[i]);
         }});
  columns.push_back({"LOCK WAIT", false, false, [](const ProcessProfile&, const ThreadSummary& t) {
                       return format_duration_ns(double(t.wait_sum_ns));
                     }});
  columns.push_back({"OF RUN", false, false, [](const ProcessProfile& p, const ThreadSummary& t) {
                       return share_of_run(t.wait_sum_ns, p.duration_ns);
                     }});
  columns.push_back({"WAIT MAX", false, false, [](const ProcessProfile&, const ThreadSummary& t) {
                       return format_duration_ns(double(t.wait_max_ns));
                     }});
  for (const OtherWaitColumn& other : kOtherWaitColumns) {
    const size_t slot = static_cast<size_t>(other.primitive);
    columns.push_back(
        {other.header, false, false,
         [slot](const ProcessProfile&, const ThreadSummary& t) {
           return format_duration_ns(double(t.wait_ns_by_primitive[slot]));
         },
         [slot](const ThreadSummary& t) { return t.wait_ns_by_primitive[slot] > 0; }});
  }
  columns.push_back({"LAST AT BARRIER", false, false, count(&ThreadSummary::barrier_last_arrivals),
                     [](const ThreadSummary& t) { return t.barrier_last_arrivals > 0; }});
  return columns;
}

}  // namespace

void write_threads(const ProfileViews& views, const ReportOptions& options, std::ostream& out) {
  size_t total = 0;
  const std::vector<ListedThread> threads = listed_threads(views.profile(), options, total);
  if (threads.size() < total)
    out << fmt::format("*** threads present: {} of {} by LOCK WAIT ***\n", threads.size(),
                       format_count(total));
  else
    out << "*** threads present ***\n";
  static const std::vector<ThreadColumn> all_columns = build_thread_columns();
  std::vector<const ThreadColumn*> columns;
  std::vector<std::string> header;
  std::vector<bool> left;
  for (const ThreadColumn& column : all_columns) {
    if (column.wide_only && !options.wide) continue;
    if (column.present && std::none_of(threads.begin(), threads.end(), [&](const ListedThread& t) {
          return column.present(*t.thread);
        }))
      continue;
    columns.push_back(&column);
    header.push_back(column.header);
    left.push_back(column.left_aligned);
  }
  TextTable table;
  table.set_header(header, left);
  for (const auto& [process, thread] : threads) {
    std::vector<std::string> row;
    for (const ThreadColumn* column : columns) row.push_back(column->text(*process, *thread));
    table.add_row(std::move(row));
  }
  if (!options.wide) table.fit_within(kReportWidth, 2, CellFit::kCutEnd, 12);
  table.write(out);
  if (threads.size() < total)
    out << fmt::format("({} more thread{}: --top N lists more, --all every one)\n",
                       format_count(total - threads.size()),
                       total - threads.size() == 1 ? "" : "s");
  out << '\n';
}

}  // namespace lockscope
