// The one interface between the interposed calls and what stores their events: a table of
// function pointers, chosen once at start-up (Runtime::sink, read through sink() in
// runtime_state.h). Below both the state (which hands it a thread's start and end) and the
// recording (which hands it every acquisition, release and wait).
#pragma once

#include <cstdint>

#include "common/profile_format.h"
#include "common/trace_format.h"

namespace lockscope::runtime {

struct ThreadState;
struct Recorded;        // recorder_bookkeeping.h
struct AcquireOutcome;  // recorder_bookkeeping.h
struct WaitOutcome;     // recorder_bookkeeping.h

// Where the slow paths hand their events: chosen once at start-up (Runtime::sink), the summary
// tables (kSummarySink: the record_* functions of recorder_bookkeeping.h) or the trace writer
// (kTraceSink, which also keeps the tables, so counts stay exact whatever the trace drops). In
// trace mode the site cache's entries are tagged for the trace sink (kTraceCacheTag), which the
// inline fast paths do not take: every event takes a slow path, and the fast paths are summary-only
// and test nothing per event.
struct EventSink {
  Recorded (*acquire)(ThreadState&, const void* lock, format::Operation, uintptr_t site,
                      const AcquireOutcome&);
  Recorded (*release)(ThreadState&, const void* lock, uintptr_t site, int result,
                      format::Operation default_operation, bool made_wait, uint64_t end_ticks);
  Recorded (*event)(ThreadState&, const void* lock, format::Operation, uintptr_t site,
                    int waiters_seen);
  Recorded (*wait)(ThreadState&, const void* lock, format::Operation, uintptr_t site,
                   const WaitOutcome&);
  // A moment with no figure of its own: a wait begins (kWaitBegin), a condition wait lets go of
  // its mutex and takes it back (kHoldPause, kHoldResume).
  void (*mark)(ThreadState&, format::TraceKind, const void* object, format::Operation,
               uintptr_t site, uint64_t ticks, uint8_t flags);
  // The thread's life: kThreadStart (it registered), kThreadExit, kFork, kExec.
  void (*thread_event)(ThreadState&, format::TraceKind);
};
extern const EventSink kSummarySink;
extern const EventSink kTraceSink;

}  // namespace lockscope::runtime
