// The rows of the "locks present" table and its columns, table-driven in the manner of perf lock:
// one entry per column (key, header, value for sorting, text), so --sort takes any column key and
// the legend is generated from the same table.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "analysis/profile_model.h"

namespace lockscope {

struct LockRow {
  const ProcessProfile* process;
  const LockSummary* lock;
};

struct LockColumn {
  std::string key;     // for --sort
  std::string header;
  std::string legend;
  bool left_aligned = false;
  std::function<double(const LockRow&)> sort_value;  // higher first
  std::function<std::string(const LockRow&)> text;
};

const std::vector<LockColumn>& lock_columns();
const LockColumn* find_lock_column(const std::string& key);
std::vector<std::string> lock_sort_keys();

// All locks of all processes, sorted by `sort_key` (descending; ties by pid, address).
// Without `include_idle`, locks never acquired are left out.
std::vector<LockRow> sorted_lock_rows(const Profile& profile, const std::string& sort_key,
                                      bool include_idle);

std::string lock_identity(const LockRow& row);  // "4908/0x7ffd1234" (+ "#2" for generation 2)

}  // namespace lockscope
