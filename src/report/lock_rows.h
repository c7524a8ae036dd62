// The rows of the "locks present" table and its columns, table-driven in the manner of perf lock:
// one entry per column (key, header, value for sorting, text), so --sort takes any column key and
// the legend is generated from the same table.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analysis/profile_model.h"

namespace lockscope {

// A row of the locks table: a whole lock, or one side of an rwlock (its own figures in `view`).
struct LockRow {
  const ProcessProfile* process;
  const LockSummary* lock;
  std::shared_ptr<const LockSummary> view;  // the side's figures; null for a whole lock
  std::string side;                          // "", "read" or "write"
  const LockSummary& figures() const { return view ? *view : *lock; }
};

struct LockColumn {
  std::string key;     // for --sort
  std::string header;
  std::string legend;
  bool left_aligned = false;
  std::function<double(const LockRow&)> sort_value;  // higher first
  std::function<std::string(const LockRow&)> text;
  bool nanoseconds = false;  // sort_value is a time in ns (for the machine formats: csv)
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

}  // namespace lockscope
