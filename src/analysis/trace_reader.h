// Reads trace files (record --trace; format: src/common/trace_format.h, docs/profile-format.md)
// and attaches them to the processes of a profile. A damaged file keeps what could be read of it:
// its problem is named on its thread, and every report shows it.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "analysis/profile_model.h"

namespace lockscope {

// One file as read: the header's identity and the events it holds, oldest first.
struct TraceFile {
  uint32_t pid = 0;
  uint64_t process_start_realtime_ns = 0;
  uint64_t process_start_ticks = 0;
  double ticks_per_second = 0;
  uint64_t ns_per_tick_q32 = 0;
  uint64_t min_wait_ticks = 0;
  bool ring = false;
  TraceThread thread;
  std::vector<format::TraceEvent> events;
};

// The file, or a one-line reason it cannot be used at all (not a trace, newer version...).
std::variant<TraceFile, std::string> read_trace_file(const std::string& path);

// Reads every *.lstrace file of `directory` into its process's `trace` (matched by pid and start
// time). A process whose profile is a snapshot is marked cut short. Files that match no process,
// or cannot be read, go to `profile.problems`.
void attach_traces(Profile& profile, const std::string& directory);

// The events' call site as a code location in `process`'s modules (absolute when in none).
CodeLocation location_of_address(const ProcessProfile& process, uint64_t address);

}  // namespace lockscope
