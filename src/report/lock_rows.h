// The rows of the "locks present" table and its columns, table-driven in the manner of perf lock:
// one entry per column (key, header, value for sorting, text), so --sort takes any column key and
// the legend is generated from the same table.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analysis/profile_model.h"
#include "analysis/profile_views.h"

namespace lockscope {

// A row of the locks table: a whole lock, or one side of an rwlock (its own figures in `view`).
struct LockRow {
  const ProcessProfile* process;
  const LockSummary* lock;
  std::shared_ptr<const LockSummary> view;  // the side's figures; null for a whole lock
  std::string side;                         // "", "read" or "write"
  const LockSummary& figures() const { return view ? *view : *lock; }
  // How the LOCK column names it (lock_label): empty for lock_identity's pid/address form.
  std::string label = {};
};

struct LockColumn {
  std::string key;  // for --sort
  std::string header;
  std::string legend;
  bool left_aligned = false;
  std::function<double(const LockRow&)> sort_value;  // higher first
  std::function<std::string(const LockRow&)> text;
  bool nanoseconds = false;  // sort_value is a time in ns (for the machine formats: csv)
  // Shown by the text report only with --wide: its default table fits 120 columns
  // (text_lock_columns says which columns stay, and why).
  bool wide_only = false;
};

// --sort keys are the column titles, lower-case, '-' for a space ("acquired", "handoffs",
// "wait-max"), the first word of the totals ("wait", "hold": WAIT TOTAL, HOLD TOTAL), and for the
// bucket columns "le-1us" ... "gt-1ms" (≤1µs ... >1ms).
inline constexpr const char* kDefaultSortKey = "wait";

const std::vector<LockColumn>& lock_columns();
// The column of a --sort key; the keys of earlier versions ("owner-changes", "bucket1")
// still name their columns. nullptr for any other key.
const LockColumn* find_lock_column(const std::string& key);
// A key of earlier versions as today's ("owner-changes" -> "handoffs"); any other key as it is.
std::string canonical_sort_key(const std::string& key);
// Today's keys, in the table's order (what --help lists).
std::vector<std::string> lock_sort_keys();

// All locks of all processes, sorted by `sort_key` (descending; ties by pid, address); an rwlock
// used from both sides gives one row per side. Without `include_idle`, locks never used are left
// out.
std::vector<LockRow> sorted_lock_rows(const Profile& profile, const std::string& sort_key,
                                      bool include_idle);

// Locks (mutexes, rwlocks, spinlocks) lead every report; condition variables, semaphores and
// barriers, whose waits are mostly idle threads waiting for work (a server's timer threads,
// seconds each), are listed apart so that they never push the locks out of the top --top.
bool is_lock_row(const LockRow& row);

// "4908/0x7ffd1234" (+ "#2" for generation 2, + " read"/" write" for an rwlock's side)
std::string lock_identity(const LockRow& row);

// How the text report names the locks in its tables: by name, or (--addresses) by pid/address.
enum class LockLabel { kName, kAddress };

// The same rows as sorted_lock_rows, each with its label: with kName, the lock's name
// (lock_names.h), "#N" for a generation after the first, " read"/" write" for an rwlock's side,
// the address's last digits where locks of the process share the name ("@…cf90", views'
// name_tags), and " (pid P)" when the profile has several processes; with kAddress,
// lock_identity's form.
std::vector<LockRow> sorted_lock_rows(const ProfileViews& views, const std::string& sort_key,
                                      bool include_idle, LockLabel label);
std::string lock_label(const ProfileViews& views, const ProcessProfile& process,
                       const LockSummary& lock, const std::string& side);

// Whether threads waited for this row's lock a visible share of their process's lock wait (at
// least kVisibleWaitShare of ProcessView::lock_wait_ns). The text report's call sites section
// shows the release sites and the stacks holds were released from only for such a lock (and for
// every one with --all): the others' releases are the unlock beside each lock call, and where a
// hold ended matters where it made someone wait.
inline constexpr double kVisibleWaitShare = 0.01;
bool made_threads_wait(const ProfileViews& views, const LockRow& row);

// The locks table's columns in the text report: with `wide`, every column of lock_columns() and
// INIT SITE; else those that are not wide_only.
std::vector<const LockColumn*> text_lock_columns(bool wide);

}  // namespace lockscope
