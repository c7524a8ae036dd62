// The text report: the seed's two displays (threads and locks with wait buckets; each lock's call
// sites with L/U and file:line), done properly — per process, sortable, with a legend for every
// column and a footer that states anything dropped, distrusted or estimated.
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <string.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "analysis/duration_format.h"
#include "analysis/weighted_stacks.h"
#include "report/blame_text.h"
#include "report/footer_text.h"
#include "report/hold_stacks_text.h"
#include "report/location_text.h"
#include "report/lock_order_text.h"
#include "report/lock_rows.h"
#include "report/process_tables_text.h"
#include "report/report_writer.h"
#include "report/text_table.h"

namespace lockscope {
namespace {

struct ListedRows {
  std::vector<LockRow> rows;  // sorted, at most --top unless --all
  size_t total = 0;           // before --top
};

// The sorted rows split into the locks and the others, each cut to --top unless --all.
std::pair<ListedRows, ListedRows> listed_rows(const Profile& profile,
                                              const ReportOptions& options) {
  ListedRows locks, others;
  for (LockRow& row : sorted_lock_rows(profile, options.sort_key, options.all))
    (is_lock_row(row) ? locks : others).rows.push_back(std::move(row));
  for (ListedRows* listed : {&locks, &others}) {
    listed->total = listed->rows.size();
    if (!options.all && listed->rows.size() > options.top) listed->rows.resize(options.top);
  }
  return {std::move(locks), std::move(others)};
}

void write_locks(const char* title, const ListedRows& listed, const ReportOptions& options,
                 std::ostream& out) {
  if (listed.total == 0) {  // a header over nothing reads as a table that failed to fill
    out << fmt::format("*** {}: none (the program took no lock while profiled) ***\n\n", title);
    return;
  }
  const LockColumn* sort_column = find_lock_column(options.sort_key);
  out << fmt::format("*** {}: {} of {} by {} ***\n", title, listed.rows.size(), listed.total,
                     sort_column ? sort_column->header : "WAIT TOTAL");
  const std::vector<LockRow>& rows = listed.rows;
  TextTable table;
  std::vector<std::string> header;
  std::vector<bool> left;
  for (const LockColumn& column : lock_columns()) {
    header.push_back(column.header);
    left.push_back(column.left_aligned);
  }
  header.push_back("INIT SITE");
  left.push_back(true);
  table.set_header(header, left);
  for (const LockRow& row : rows) {
    std::vector<std::string> cells;
    for (const LockColumn& column : lock_columns()) cells.push_back(column.text(row));
    cells.push_back(row.lock->init_site.known() ? row.lock->init_site.label : "-");
    table.add_row(std::move(cells));
  }
  table.write(out);
  out << '\n';
}

// "L:lock", "U", "U:read", "W:wait", "E:signal": acquire, release, wait, event.
std::string operation_label(format::Operation op) {
  switch (format::operation_class(op)) {
    case format::OperationClass::kAcquire: return "L:" + operation_name(op);
    case format::OperationClass::kRelease:
      return op == format::Operation::kReadUnlock    ? "U:read"
             : op == format::Operation::kWriteUnlock ? "U:write"
                                                     : "U";
    case format::OperationClass::kWait: return "W:" + operation_name(op);
    case format::OperationClass::kEvent: return "E:" + operation_name(op);
  }
  return operation_name(op);
}

// What only some operations know: whom an rwlock waiter queued behind, whether a signal found a
// waiter, who completed a barrier.
std::string site_detail(const SiteSummary& site) {
  std::vector<std::string> parts;
  if (site.behind_readers) parts.push_back(fmt::format("behind readers {}", format_count(site.behind_readers)));
  if (site.behind_writer) parts.push_back(fmt::format("behind writer {}", format_count(site.behind_writer)));
  if (site.with_waiters) parts.push_back(fmt::format("woke {}", format_count(site.with_waiters)));
  if (site.without_waiters)
    parts.push_back(fmt::format("no waiter {}", format_count(site.without_waiters)));
  if (site.arrived_last) parts.push_back(fmt::format("arrived last {}", format_count(site.arrived_last)));
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : ", ") + part;
  return text;
}

// Ties between process-shared locks of different processes, worked out once per report: looking
// through every other process's locks for each lock listed made `--all` quadratic in locks.
//
// Other processes of the same family (fork/exec) with a process-shared lock of the same address
// and generation: after fork, the same lock in shared memory (each process records its own use of
// it). Another generation, or an unrelated process, is another lock.
class ProcessSharedTies {
 public:
  explicit ProcessSharedTies(const Profile& profile) {
    for (const ProcessProfile& process : profile.processes) {
      pids_.insert(process.pid);
      parent_of_.try_emplace(process.pid, process.ppid);  // the first process of a pid, as before
    }
    for (const ProcessProfile& process : profile.processes) {
      const uint32_t family = family_of(process.pid, profile.processes.size());
      for (const LockSummary& lock : process.locks) {
        if (!(lock.flags & format::kLockProcessShared)) continue;
        if (lock.acquisitions + lock.failed + lock.events == 0) continue;
        const Key key{family, lock.address, lock.generation};
        if (seen_.insert({key, process.pid}).second) users_[key].push_back(process.pid);
      }
    }
  }

  // "  (process-shared; also used by pid 12, 14)", or "" when no other process used it.
  std::string shared_with(const LockRow& row) const {
    if (!(row.lock->flags & format::kLockProcessShared)) return {};
    auto family = families_.find(row.process->pid);
    if (family == families_.end()) return {};
    auto users = users_.find(Key{family->second, row.lock->address, row.lock->generation});
    if (users == users_.end()) return {};
    std::vector<uint32_t> pids;
    for (uint32_t pid : users->second)
      if (pid != row.process->pid) pids.push_back(pid);
    return pids.empty() ? std::string()
                        : fmt::format("  (process-shared; also used by pid {})", fmt::join(pids, ", "));
  }

 private:
  using Key = std::tuple<uint32_t, uint64_t, uint32_t>;  // family, address, generation

  // The profiled process a process descends from, as far as the profile knows (fork/exec
  // chains); at most `hops` steps up, so that a cycle of reused pids ends.
  uint32_t family_of(uint32_t pid, size_t hops) {
    std::vector<uint32_t> path;
    uint32_t at = pid;
    for (size_t hop = 0;; ++hop) {
      if (auto known = families_.find(at); known != families_.end()) {
        at = known->second;
        break;
      }
      path.push_back(at);
      const uint32_t parent = parent_of_.at(at);
      if (hop >= hops || parent == at || !pids_.count(parent)) break;
      at = parent;
    }
    for (uint32_t member : path) families_.emplace(member, at);
    return at;
  }

  std::unordered_set<uint32_t> pids_;
  std::unordered_map<uint32_t, uint32_t> parent_of_;
  std::unordered_map<uint32_t, uint32_t> families_;
  std::map<Key, std::vector<uint32_t>> users_;  // each pid once, in the profile's process order
  std::set<std::pair<Key, uint32_t>> seen_;
};

void write_call_sites(const ProcessSharedTies& ties, const std::vector<LockRow>& rows,
                      const ReportOptions& options, std::ostream& out) {
  out << "*** call sites of each lock listed ***\n";
  for (const LockRow& row : rows) {
    // A mutex's re-takes inside condition waits are not calls of the program, but their waits
    // are in its wait total, buckets and handoffs: said here, so the figures add up.
    const LockSummary& figures = row.figures();
    const std::string reacquired =
        figures.reacquisitions == 0
            ? std::string()
            : fmt::format(" ({} of it in {} re-acquisitions inside condition waits)",
                          format_duration_ns(double(figures.reacquire_wait_ns)),
                          format_count(figures.reacquisitions));
    // A condvar, semaphore or barrier (a row listed apart from the locks) is waited on, not
    // acquired: its waits as such, those that failed or timed out among them (all 21 timed-out
    // waits of a condvar read "acquired 0, contended 0, wait 102ms").
    const std::string calls =
        !is_lock_row(row) ? fmt::format("waits {} ({} failed or timed out)",
                                format_count(figures.acquisitions + figures.failed),
                                format_count(figures.failed))
                  : fmt::format("acquired {}, contended {}", format_count(figures.acquisitions),
                                format_count(figures.contended));
    out << fmt::format("{}  {}  {}, wait {}{}{}\n", lock_identity(row), lock_kind_name(*row.lock),
                       calls, format_duration_ns(double(figures.wait_sum_ns)), reacquired,
                       ties.shared_with(row));
    std::vector<const SiteSummary*> sites;
    for (const SiteSummary& site : row.figures().sites) sites.push_back(&site);
    std::stable_sort(sites.begin(), sites.end(), [](const SiteSummary* a, const SiteSummary* b) {
      if (a->wait_sum_ns != b->wait_sum_ns) return a->wait_sum_ns > b->wait_sum_ns;
      return a->count > b->count;
    });
    bool any_detail = false;
    for (const SiteSummary* site : sites) any_detail |= !site_detail(*site).empty();
    TextTable table;
    std::vector<std::string> header = {"OP",         "COUNT",    "CONTENDED", "FAILED", "WAIT TOTAL",
                                       "WAIT MAX",   "HOLD TOTAL", "HOLD MAX"};
    std::vector<bool> left = {true, false, false, false, false, false, false, false};
    if (any_detail) {
      header.push_back("DETAIL");
      left.push_back(true);
    }
    header.push_back("CALLER");
    left.push_back(true);
    table.set_header(header, left);
    for (const SiteSummary* site : sites) {
      const format::OperationClass kind = format::operation_class(site->operation);
      const bool timed = kind == format::OperationClass::kAcquire ||
                         kind == format::OperationClass::kWait;
      const bool holds = kind == format::OperationClass::kAcquire;
      std::vector<std::string> cells = {operation_label(site->operation), format_count(site->count),
                                      timed ? format_count(site->contended) : "",
                                      format_count(site->failed),
                                      timed ? format_duration_ns(double(site->wait_sum_ns)) : "",
                                      timed ? format_duration_ns(double(site->wait_max_ns)) : "",
                                      holds ? format_duration_ns(double(site->hold_sum_ns)) : "",
                                      holds ? format_duration_ns(double(site->hold_max_ns)) : ""};
      if (any_detail) cells.push_back(site_detail(*site));
      cells.push_back(location_text(site->location));
      table.add_row(std::move(cells));
    }
    table.write(out, "  ");
    write_blame(sites, out);
    write_wait_stacks(*row.process, sites, 5, out);
    write_holder_stacks(*row.process, sites, 5, out);
    write_hold_stacks(*row.process, sites, 3, out);
    if (options.attribution)
      write_wait_attribution(attribute_waits(*row.process, row.figures().sites, *options.attribution),
                             *options.attribution, out);
    out << '\n';
  }
}

// "  HEADER      text..." wrapped at 100 columns, continuation lines indented under the text.
void write_wrapped(std::ostream& out, const std::string& header, const std::string& text) {
  constexpr size_t kWidth = 100, kIndent = 14;
  std::string line = fmt::format("  {:<11} ", header);
  size_t width = display_width(line);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (width + display_width(word) > kWidth && width > kIndent) {
      out << line.substr(0, line.size() - 1) << '\n';  // without the trailing space
      line = std::string(kIndent, ' ');
      width = kIndent;
    }
    line += word + " ";
    width += display_width(word) + 1;
    start = end + 1;
  }
  out << line.substr(0, line.size() - 1) << '\n';
}

void write_legend(std::ostream& out) {
  out << "legend:\n";
  for (const LockColumn& column : lock_columns())
    if (!column.legend.empty()) write_wrapped(out, column.header, column.legend);
  out << "  LOCKS       (processes) synchronization objects used; ACQUIRED, CONTENDED and LOCK "
         "WAIT\n"
         "              there add up its threads' (the threads table's columns)\n"
         "  OF RUN      (processes, threads) LOCK WAIT as a share of the process's run time; a\n"
         "              process's adds up its threads' (over 100 % when several waited at once)\n"
         "  OP          L: acquire (lock, trylock, rdlock, wrlock, spin_lock...); U: release "
         "(U:read,\n"
         "              U:write for an rwlock's sides); W: wait that holds nothing after (condvar\n"
         "              wait, sem_wait, barrier_wait; W:cond-wake = a condvar wait's wake-up\n"
         "              latency, from the waking signal to the return; W:cond-reacquire = the "
         "mutex\n"
         "              re-taken inside pthread_cond_wait, waiting only while the signaller still\n"
         "              held it); E: event (signal, broadcast, sem_post)\n"
         "  DETAIL      rwlock waits behind readers / a writer; signals that woke a waiter or "
         "found\n"
         "              none; barrier arrivals that completed it (arrived last)\n"
         "  LOCK WAIT   (threads) blocked on mutexes, rwlocks and condvar re-acquires; spinning,\n"
         "              condition, semaphore and barrier waits have columns of their own\n"
         "  COUNT       calls from that site; FAILED: calls that did not acquire (busy, timeout,\n"
         "              error) or unlocks that returned an error\n"
         "  HOLD        attributed to the site that acquired the lock\n"
         "  times: ns, µs, ms, s; counts are exact\n";
}

class TextReportWriter final : public ReportWriter {
 public:
  using ReportWriter::write;
  void write(const ProfileViews& views, const ReportOptions& options, ReportSink& sink) override {
    const Profile& profile = views.profile();
    std::ostream& out = sink.stream();
    size_t threads = 0;
    for (const ProcessProfile& p : profile.processes) threads += p.threads.size();
    out << fmt::format("lockscope report of {}: {} process{}, {} thread{}\n\n", profile.directory,
                       profile.processes.size(), profile.processes.size() == 1 ? "" : "es", threads,
                       threads == 1 ? "" : "s");
    write_processes(profile, options, out);
    write_threads(profile, options, out);
    const auto [locks, others] = listed_rows(profile, options);
    write_locks("locks present", locks, options, out);
    if (others.total > 0)
      write_locks("condition variables, semaphores and barriers", others, options, out);
    std::vector<LockRow> rows = locks.rows;
    rows.insert(rows.end(), others.rows.begin(), others.rows.end());
    write_call_sites(ProcessSharedTies(profile), rows, options, out);
    write_lock_order_inversions(profile, out);
    write_legend(out);
    out << '\n';
    write_footer(profile, out);
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_text_report_writer() {
  return std::make_unique<TextReportWriter>();
}

}  // namespace lockscope
