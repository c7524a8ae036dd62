#include "report/lock_rows.h"

#include <fmt/core.h>

#include <algorithm>

#include "analysis/duration_format.h"
#include "analysis/lock_kinds.h"
#include "analysis/lock_names.h"

namespace lockscope {
namespace {

std::string bucket_text(const LockRow& row, size_t index) {
  return format_count(report_buckets(row.figures().wait)[index]);
}

std::vector<LockColumn> build_columns() {
  auto count_column = [](std::string key, std::string header, std::string legend,
                         uint64_t LockSummary::*field) {
    return LockColumn{std::move(key),
                      std::move(header),
                      std::move(legend),
                      false,
                      [field](const LockRow& r) { return static_cast<double>(r.figures().*field); },
                      [field](const LockRow& r) { return format_count(r.figures().*field); }};
  };
  auto duration_column = [](std::string key, std::string header, std::string legend,
                            std::function<double(const LockSummary&)> value) {
    return LockColumn{std::move(key),
                      std::move(header),
                      std::move(legend),
                      false,
                      [value](const LockRow& r) { return value(r.figures()); },
                      [value](const LockRow& r) { return format_duration_ns(value(r.figures())); },
                      true};
  };
  std::vector<LockColumn> columns;
  columns.push_back(LockColumn{
      "lock", "LOCK",
      "its name: the variable that holds it (+offset for a member), else where it was "
      "initialised, else where it was first taken; #N: its Nth generation, after a destroy or "
      "re-init; @…: the address's last digits, where locks share a name; (pid P) in a profile of "
      "several processes. --addresses: pid/address",
      true, [](const LockRow& r) { return -static_cast<double>(r.lock->address); },
      [](const LockRow& r) { return r.label.empty() ? lock_identity(r) : r.label; }});
  columns.push_back(LockColumn{"kind", "KIND",
                               "mutex (type, +pshared/+robust/+pi/+pp), rwlock, spinlock, condvar, "
                               "semaphore, barrier(count)",
                               true, [](const LockRow&) { return 0.0; },
                               [](const LockRow& r) { return lock_kind_name(*r.lock); }});
  columns.push_back(count_column("acquired", "ACQUIRED",
                                 "successful acquisitions; for a condvar, semaphore or barrier: "
                                 "completed waits",
                                 &LockSummary::acquisitions));
  columns.push_back(count_column("contended", "CONTENDED",
                                 "acquisitions that had to wait (the first try failed)",
                                 &LockSummary::contended));
  columns.push_back(count_column("failed", "FAILED",
                                 "trylocks that found it busy, timed-out and "
                                 "failed locks",
                                 &LockSummary::failed));
  columns.push_back(count_column("handoffs", "HANDOFFS",
                                 "owner changes: acquisitions (and a mutex's re-acquisitions "
                                 "inside condition waits) by another thread than the last owner",
                                 &LockSummary::owner_changes));
  columns.push_back(count_column("cross-cpu", "CROSS-CPU",
                                 "contended acquisitions whose lock came from a release on another "
                                 "CPU (its cache lines moved between cores); not known for "
                                 "read-side waits and handoffs by a condition wait",
                                 &LockSummary::cross_cpu_handoffs));
  const char* bucket_headers[] = {"≤1µs", "≤10µs", "≤100µs", "≤1ms", ">1ms"};
  const char* bucket_keys[] = {"le-1us", "le-10us", "le-100us", "le-1ms", "gt-1ms"};
  for (size_t i = 0; i < 5; ++i) {
    columns.push_back(LockColumn{
        bucket_keys[i], bucket_headers[i],
        i == 0 ? "acquire calls by time waited: uncontended ones count as "
                 "≤1µs; timed-out waits are included; a mutex's also count the "
                 "re-acquisitions inside condition waits that had to wait (not calls: not "
                 "in ACQUIRED or CONTENDED)"
               : "",
        false,
        [i](const LockRow& r) { return static_cast<double>(report_buckets(r.figures().wait)[i]); },
        [i](const LockRow& r) { return bucket_text(r, i); }});
  }
  columns.push_back(duration_column("wait", "WAIT TOTAL",
                                    "time threads spent blocked on it: acquiring (spinlock: "
                                    "spinning, CPU burned), waiting for a condition, a semaphore "
                                    "or the other threads at a barrier; a mutex's includes its "
                                    "re-acquisitions after condition waits",
                                    [](const LockSummary& l) { return double(l.wait_sum_ns); }));
  columns.push_back(duration_column("wait-max", "WAIT MAX", "longest single wait",
                                    [](const LockSummary& l) { return double(l.wait_max_ns); }));
  columns.push_back(duration_column("wait-p99", "WAIT P99",
                                    "99th percentile of the waits only (contended acquisitions, "
                                    "blocking and timed-out waits, re-acquires; histogram "
                                    "estimate, ±half a leading digit)",
                                    [](const LockSummary& l) {
                                      // Interpolation never claims more than the longest wait.
                                      return std::min(l.waits_only.percentile(0.99),
                                                      double(l.wait_max_ns));
                                    }));
  columns.push_back(duration_column("hold", "HOLD TOTAL",
                                    "time it was held (estimate when holds "
                                    "are sampled, see the footer; never more than the run allows)",
                                    [](const LockSummary& l) { return double(l.hold_sum_ns); }));
  columns.push_back(
      LockColumn{"hold-error", "±95%",
                 "the HOLD TOTAL estimate's sampling error, 95 % bound (\"exact\": every "
                 "hold was timed)",
                 false, [](const LockRow& r) { return double(r.figures().hold_error_ns); },
                 [](const LockRow& r) {
                   const LockSummary& l = r.figures();
                   if (l.hold_error_ns == 0) return std::string(l.hold_sum_ns ? "exact" : "");
                   const double percent = 100.0 * double(l.hold_error_ns) / double(l.hold_sum_ns);
                   // An error too small for one decimal is still an estimate: never "±0.0%".
                   return percent < 0.05 ? std::string("<±0.1%") : fmt::format("±{:.1f}%", percent);
                 },
                 true});
  columns.push_back(duration_column("hold-max", "HOLD MAX", "longest timed hold",
                                    [](const LockSummary& l) { return double(l.hold_max_ns); }));
  // The text report's default table fits 120 columns next to a lock's name (some 50 of them):
  // what tells which lock costs how much stays (KIND, ACQUIRED, CONTENDED, WAIT TOTAL and MAX,
  // HOLD TOTAL); --wide adds
  //   FAILED: trylocks and timeouts, rare, and in the call sites' table where they happen;
  //   HANDOFFS, CROSS-CPU: how the lock moved between threads and cores, which the findings cite
  //     where it is the cause;
  //   the five wait buckets: 40 columns whose tail WAIT MAX sums up (the threads table keeps
  //     them under --wide too);
  //   WAIT P99: an estimate between the mean wait (WAIT TOTAL / CONTENDED) and WAIT MAX;
  //   ±95%: the hold estimate's error; the notes say when holds were sampled;
  //   HOLD MAX: in the call sites' table, by the site that held it.
  for (LockColumn& column : columns)
    for (const char* key : {"failed", "handoffs", "cross-cpu", "le-1us", "le-10us", "le-100us",
                            "le-1ms", "gt-1ms", "wait-p99", "hold-error", "hold-max"})
      if (column.key == key) column.wide_only = true;
  return columns;
}

// Not a --sort key, nor a machine format's column (csv has init_site of its own): the text
// report's only, and --wide's, since a lock with an init call is named after it.
LockColumn init_site_column() {
  return LockColumn{
      "init-site",
      "INIT SITE",
      "where its *_init was called, - if not seen (a lock named after its init "
      "call bears it as its name)",
      true,
      [](const LockRow&) { return 0.0; },
      [](const LockRow& r) { return r.lock->init_site.known() ? r.lock->init_site.label : "-"; },
      false,
      true};
}

}  // namespace

const std::vector<LockColumn>& lock_columns() {
  static const std::vector<LockColumn> columns = build_columns();
  return columns;
}

std::string canonical_sort_key(const std::string& key) {
  // The keys of earlier versions, before they were the column titles.
  static const std::pair<const char*, const char*> kEarlier[] = {
      {"acquisitions", "acquired"}, {"owner-changes", "handoffs"}, {"bucket1", "le-1us"},
      {"bucket2", "le-10us"},       {"bucket3", "le-100us"},       {"bucket4", "le-1ms"},
      {"bucket5", "gt-1ms"}};
  for (const auto& [earlier, now] : kEarlier)
    if (key == earlier) return now;
  return key;
}

const LockColumn* find_lock_column(const std::string& key) {
  const std::string canonical = canonical_sort_key(key);
  for (const LockColumn& column : lock_columns())
    if (column.key == canonical) return &column;
  return nullptr;
}

std::vector<std::string> lock_sort_keys() {
  std::vector<std::string> keys;
  for (const LockColumn& column : lock_columns())
    if (column.key != "kind") keys.push_back(column.key);
  return keys;
}

namespace {

// An rwlock side as a lock of its own: the side's totals and only that side's call sites.
std::shared_ptr<const LockSummary> side_view(const LockSummary& lock, bool read) {
  auto view = std::make_shared<LockSummary>(lock);
  const SideSummary& side = read ? lock.read_side : lock.write_side;
  static_cast<SideSummary&>(*view) = side;
  if (read) view->owner_changes = 0;  // owners are a notion of the exclusive side
  std::erase_if(view->sites, [read](const SiteSummary& site) {
    const format::Operation op = site.operation;
    return read ? !(format::is_read_side(op) || op == format::Operation::kReadUnlock)
                : (format::is_read_side(op) || op == format::Operation::kReadUnlock);
  });
  return view;
}

}  // namespace

std::vector<LockRow> sorted_lock_rows(const Profile& profile, const std::string& sort_key,
                                      bool include_idle) {
  std::vector<LockRow> rows;
  for (const ProcessProfile& process : profile.processes)
    for (const LockSummary& lock : process.locks) {
      if (!include_idle && !lock_was_used(lock)) continue;
      const bool both_sides = lock.primitive == format::Primitive::kRwLock &&
                              lock.read_side.acquisitions + lock.read_side.failed > 0 &&
                              lock.write_side.acquisitions + lock.write_side.failed > 0;
      if (!both_sides) {
        rows.push_back({&process, &lock, nullptr, ""});
        continue;
      }
      rows.push_back({&process, &lock, side_view(lock, true), "read"});
      rows.push_back({&process, &lock, side_view(lock, false), "write"});
    }
  const LockColumn* column = find_lock_column(sort_key);
  if (!column) column = find_lock_column(kDefaultSortKey);
  std::stable_sort(rows.begin(), rows.end(), [column](const LockRow& a, const LockRow& b) {
    const double ka = column->sort_value(a), kb = column->sort_value(b);
    if (ka != kb) return ka > kb;
    if (a.process->pid != b.process->pid) return a.process->pid < b.process->pid;
    if (a.lock->address != b.lock->address) return a.lock->address < b.lock->address;
    return a.side < b.side;
  });
  return rows;
}

bool is_lock_row(const LockRow& row) {
  return is_lock_primitive(row.lock->primitive);
}

std::string lock_identity(const LockRow& row) {
  std::string id = fmt::format("{}/0x{:x}", row.process->pid, row.lock->address);
  if (row.lock->generation > 0) id += fmt::format("#{}", row.lock->generation);
  if (!row.side.empty()) id += " " + row.side;
  return id;
}

}  // namespace lockscope

namespace lockscope {

std::string lock_label(const ProfileViews& views, const ProcessProfile& process,
                       const LockSummary& lock, const std::string& side) {
  const Profile& profile = views.profile();
  const size_t p = static_cast<size_t>(&process - profile.processes.data());
  const size_t l = static_cast<size_t>(&lock - process.locks.data());
  std::string label = lock_name(lock);
  if (lock.generation > 0) label += fmt::format("#{}", lock.generation);
  if (!side.empty()) label += " " + side;
  if (p < views.processes().size())
    if (auto tag = views.processes()[p].name_tags.find(l);
        tag != views.processes()[p].name_tags.end())
      label += " " + tag->second;
  if (profile.processes.size() > 1) label += fmt::format(" (pid {})", process.pid);
  return label;
}

std::vector<LockRow> sorted_lock_rows(const ProfileViews& views, const std::string& sort_key,
                                      bool include_idle, LockLabel label) {
  std::vector<LockRow> rows = sorted_lock_rows(views.profile(), sort_key, include_idle);
  for (LockRow& row : rows)
    row.label = label == LockLabel::kAddress ? lock_identity(row)
                                             : lock_label(views, *row.process, *row.lock, row.side);
  return rows;
}

bool made_threads_wait(const ProfileViews& views, const LockRow& row) {
  const uint64_t wait_ns = row.figures().wait_sum_ns;
  if (wait_ns == 0) return false;
  const size_t p = static_cast<size_t>(row.process - views.profile().processes.data());
  const uint64_t process_ns = p < views.processes().size() ? views.processes()[p].lock_wait_ns : 0;
  return double(wait_ns) >= kVisibleWaitShare * double(process_ns);
}

std::vector<const LockColumn*> text_lock_columns(bool wide) {
  static const LockColumn init_site = init_site_column();
  std::vector<const LockColumn*> columns;
  for (const LockColumn& column : lock_columns())
    if (wide || !column.wide_only) columns.push_back(&column);
  if (wide) columns.push_back(&init_site);
  return columns;
}

}  // namespace lockscope
