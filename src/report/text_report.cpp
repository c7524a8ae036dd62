// The text report: first what to change (findings_text.h: the verdict and the top findings, within
// 80 columns and 40 lines; --brief stops there), then the seed's two displays (threads and locks;
// each lock's call sites with L/U and file:line), done properly — per process, sortable, within
// 120 columns (--wide: every column), each call stack printed once (stack_ids.h), a legend with
// --legend, and a footer that states anything dropped, distrusted or estimated.
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
#include "analysis/lock_kinds.h"
#include "analysis/weighted_stacks.h"
#include "report/blame_text.h"
#include "report/findings_text.h"
#include "report/footer_text.h"
#include "report/hold_stacks_text.h"
#include "report/location_text.h"
#include "report/lock_order_text.h"
#include "report/lock_rows.h"
#include "report/process_tables_text.h"
#include "report/report_writer.h"
#include "report/stack_ids.h"
#include "report/text_table.h"

namespace lockscope {
namespace {

struct ListedRows {
  std::vector<LockRow> rows;  // sorted, at most --top unless --all
  size_t total = 0;           // before --top
};

// The sorted rows split into the locks and the others, each cut to --top unless --all.
std::pair<ListedRows, ListedRows> listed_rows(const ProfileViews& views,
                                              const ReportOptions& options) {
  ListedRows locks, others;
  for (LockRow& row : sorted_lock_rows(views, options.sort_key, options.all,
                                       options.addresses ? LockLabel::kAddress : LockLabel::kName))
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
  const std::vector<const LockColumn*> columns = text_lock_columns(options.wide);
  for (const LockColumn* column : columns) {
    header.push_back(column->header);
    left.push_back(column->left_aligned);
  }
  table.set_header(header, left);
  for (const LockRow& row : rows) {
    std::vector<std::string> cells;
    for (const LockColumn* column : columns) cells.push_back(column->text(row));
    table.add_row(std::move(cells));
  }
  // The name gives way: its file path's directories first, then its middle (text_table.h).
  if (!options.wide) table.fit_within(kReportWidth, 0, CellFit::kCutMiddle);
  table.write(out);
  out << '\n';
}

// "L:lock", "U", "U:read", "W:wait", "E:signal": acquire, release, wait, event.
std::string operation_label(format::Operation op) {
  switch (format::operation_class(op)) {
    case format::OperationClass::kAcquire:
      return "L:" + operation_name(op);
    case format::OperationClass::kRelease:
      return op == format::Operation::kReadUnlock    ? "U:read"
             : op == format::Operation::kWriteUnlock ? "U:write"
                                                     : "U";
    case format::OperationClass::kWait:
      return "W:" + operation_name(op);
    case format::OperationClass::kEvent:
      return "E:" + operation_name(op);
  }
  return operation_name(op);
}

// What only some operations know: whom an rwlock waiter queued behind, whether a signal found a
// waiter, who completed a barrier.
std::string site_detail(const SiteSummary& site) {
  std::vector<std::string> parts;
  if (site.behind_readers)
    parts.push_back(fmt::format("behind readers {}", format_count(site.behind_readers)));
  if (site.behind_writer)
    parts.push_back(fmt::format("behind writer {}", format_count(site.behind_writer)));
  if (site.with_waiters) parts.push_back(fmt::format("woke {}", format_count(site.with_waiters)));
  if (site.without_waiters)
    parts.push_back(fmt::format("no waiter {}", format_count(site.without_waiters)));
  if (site.arrived_last)
    parts.push_back(fmt::format("arrived last {}", format_count(site.arrived_last)));
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : ", ") + part;
  return text;
}

// "  (process-shared; also used by pid 12, 14)", or "" when no other process used it.
std::string shared_with(const ProfileViews& views, const LockRow& row) {
  const Profile& profile = views.profile();
  const size_t p = static_cast<size_t>(row.process - profile.processes.data());
  const size_t l = static_cast<size_t>(row.lock - row.process->locks.data());
  const auto& ties = views.processes()[p].shared_with;
  const auto tie = ties.find(l);
  if (tie == ties.end()) return {};
  return fmt::format("  (process-shared; also used by pid {})", fmt::join(tie->second, ", "));
}

void write_call_sites(const ProfileViews& views, const std::vector<LockRow>& rows,
                      const ReportOptions& options, std::ostream& out) {
  StackIds stacks;
  out << (options.all ? "*** call sites of each lock listed ***\n"
                      : "*** call sites of each lock listed (of a lock that made no thread wait, "
                        "the acquire sites: --all lists every one) ***\n");
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
        !is_lock_row(row)
            ? fmt::format("waits {} ({} failed or timed out)",
                          format_count(figures.acquisitions + figures.failed),
                          format_count(figures.failed))
            : fmt::format("acquired {}, contended {}", format_count(figures.acquisitions),
                          format_count(figures.contended));
    write_wrapped_line(out, fmt::format("{}  {}  {}, wait {}{}{}",
                                        row.label.empty() ? lock_identity(row) : row.label,
                                        lock_kind_name(*row.lock), calls,
                                        format_duration_ns(double(figures.wait_sum_ns)), reacquired,
                                        shared_with(views, row)));
    // The release sites and hold stacks of a lock that made no thread wait are --all's
    // (lock_rows.h, made_threads_wait): a failed release is listed whatever the lock.
    const bool waited = options.all || made_threads_wait(views, row);
    std::vector<const SiteSummary*> sites;
    for (const SiteSummary& site : row.figures().sites)
      if (waited || site.failed > 0 ||
          format::operation_class(site.operation) != format::OperationClass::kRelease)
        sites.push_back(&site);
    std::stable_sort(sites.begin(), sites.end(), [](const SiteSummary* a, const SiteSummary* b) {
      if (a->wait_sum_ns != b->wait_sum_ns) return a->wait_sum_ns > b->wait_sum_ns;
      return a->count > b->count;
    });
    // DETAIL and FAILED are columns only where some site has one (FAILED always with --wide).
    bool any_detail = false, any_failed = options.wide;
    for (const SiteSummary* site : sites) {
      any_detail |= !site_detail(*site).empty();
      any_failed |= site->failed > 0;
    }
    TextTable table;
    std::vector<std::string> header = {"OP", "COUNT", "CONTENDED"};
    std::vector<bool> left = {true, false, false};
    if (any_failed) {
      header.push_back("FAILED");
      left.push_back(false);
    }
    for (const char* title : {"WAIT TOTAL", "WAIT MAX", "HOLD TOTAL", "HOLD MAX"}) {
      header.push_back(title);
      left.push_back(false);
    }
    if (any_detail) {
      header.push_back("DETAIL");
      left.push_back(true);
    }
    header.push_back("CALLER");
    left.push_back(true);
    table.set_header(header, left);
    for (const SiteSummary* site : sites) {
      const format::OperationClass kind = format::operation_class(site->operation);
      const bool timed =
          kind == format::OperationClass::kAcquire || kind == format::OperationClass::kWait;
      const bool holds = kind == format::OperationClass::kAcquire;
      std::vector<std::string> cells = {operation_label(site->operation), format_count(site->count),
                                        timed ? format_count(site->contended) : ""};
      if (any_failed) cells.push_back(format_count(site->failed));
      for (std::string cell : {timed ? format_duration_ns(double(site->wait_sum_ns)) : "",
                               timed ? format_duration_ns(double(site->wait_max_ns)) : "",
                               holds ? format_duration_ns(double(site->hold_sum_ns)) : "",
                               holds ? format_duration_ns(double(site->hold_max_ns)) : ""})
        cells.push_back(std::move(cell));
      if (any_detail) cells.push_back(site_detail(*site));
      cells.push_back(location_text(site->location));
      table.add_row(std::move(cells));
    }
    // The caller wraps under its column (at " (inlined into", or its path).
    if (!options.wide) table.fit_within(kReportWidth, header.size() - 1, CellFit::kWrap, 40);
    table.write(out, "  ");
    write_blame(sites, out);
    write_wait_stacks(*row.process, sites, 5, stacks, out);
    write_holder_stacks(*row.process, sites, 5, stacks, out);
    if (waited) write_hold_stacks(*row.process, sites, 3, stacks, out);
    if (options.attribution)
      write_wait_attribution(
          attribute_waits(*row.process, row.figures().sites, *options.attribution),
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

// The columns' meanings (docs/cli.md has the same, "Reading the text report"): the locks table's
// from its column table, the others written out here.
void write_legend(bool wide, std::ostream& out) {
  out << "legend:\n";
  for (const LockColumn* column : text_lock_columns(wide))
    if (!column->legend.empty()) write_wrapped(out, column->header, column->legend);
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
    const std::string heading =
        fmt::format("lockscope report of {}: {} process{}, {} thread{}", profile.directory,
                    profile.processes.size(), profile.processes.size() == 1 ? "" : "es", threads,
                    threads == 1 ? "" : "s");
    const size_t left_out =
        write_first_screen(views, views.findings(), heading, options.brief, out);
    if (options.brief) return;
    write_more_findings(views, views.findings(), left_out, out);
    write_processes(views, options, out);
    write_threads(views, options, out);
    const auto [locks, others] = listed_rows(views, options);
    write_locks("locks present", locks, options, out);
    if (others.total > 0)
      write_locks("condition variables, semaphores and barriers", others, options, out);
    std::vector<LockRow> rows = locks.rows;
    rows.insert(rows.end(), others.rows.begin(), others.rows.end());
    write_call_sites(views, rows, options, out);
    write_lock_order_inversions(views, options.addresses, out);
    if (options.legend) {
      write_legend(options.wide, out);
      out << '\n';
    }
    write_footer(profile, out);
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_text_report_writer() {
  return std::make_unique<TextReportWriter>();
}

}  // namespace lockscope
