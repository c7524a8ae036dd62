// Trace mode's files (record --trace): a thread's made in the profile directory, and the
// process's marked complete at its end. Above the per-thread buffer (trace_writer.h): these read
// the runtime's state (its directory, clock and settings; the registry of thread slots).
#pragma once

#include <cstdint>

#include "runtime/trace_writer.h"

namespace lockscope::runtime {

// Creates and maps the calling thread's file in the profile directory; false (and `buffer` left
// empty) when the system refused, which the caller counts.
bool open_trace(TraceBuffer& buffer, uint32_t tid, uint64_t now_ticks);
// The process wrote its final profile: every thread's file is complete (threads may still write).
// Under the merge lock (a gone thread's file may be unmapped meanwhile); `from_signal`: only tried.
void mark_process_traces_closed(bool from_signal);

}  // namespace lockscope::runtime
