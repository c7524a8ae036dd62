// The text report's first two tables: the processes, and their threads (the top --top by lock
// wait, or every one with --all), each wait total next to the share of the run it is.
#pragma once

#include <ostream>

#include "analysis/profile_model.h"
#include "analysis/profile_views.h"
#include "report/report_writer.h"

namespace lockscope {

// Without --all, processes that took no lock (the views' took_no_lock) are one line under the
// table. Both tables fit 120 columns (COMMAND and NAME give way); the threads table's wait
// buckets, RELEASED and FAILED are --wide's.
void write_processes(const ProfileViews& views, const ReportOptions& options, std::ostream& out);
void write_threads(const ProfileViews& views, const ReportOptions& options, std::ostream& out);

// "0.4%" of `run_ns` ("<0.1%" for less, "" without a run); over 100 % when several threads
// waited at once.
std::string share_of_run(uint64_t ns, uint64_t run_ns);

}  // namespace lockscope
