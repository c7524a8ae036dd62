// The threads' side of a profile write: one pass over the thread slots, under the merge lock while
// the other threads are paused (thread_pause.h), that reads each live thread's totals and call
// sites together with the wait it is blocked in and the holds it has, so that a profile's thread
// totals and site totals agree; then, after the file's sections are assembled, what the threads
// that went on did meanwhile (counted, not in the file).
#pragma once

#include <cstdint>

#include "common/profile_format.h"
#include "runtime/byte_buffer.h"

namespace lockscope::runtime {

struct Runtime;
struct ThreadState;
class SiteTable;

// A thread that still holds a slot (running, or past its exit destructor), read in one go: its
// totals, what it is blocked in or holding, and how many calls its table had then.
struct LiveThread {
  format::ThreadRecord record;
  format::ThreadFactsRecord facts;
  uint64_t calls_at_snapshot;
  uint32_t slot;
  int extra_wait_bucket;  // the in-progress lock wait's bucket, -1 when none
};

// A slot whose thread's calls are recorded now (live, or exiting, and registered).
bool records_now(const ThreadState& t);

// Each such thread's sites merged into `all`, its in-progress wait and holds counted up to now
// (into `all`, its record and `counters`), its LiveThread appended to `live`. Returns the site
// entries dropped (`all` full).
uint64_t snapshot_threads(Runtime& rt, SiteTable& all, ByteBuffer& live,
                          uint64_t (&counters)[format::kCounterSlots]);

// Calls that threads still running made after their snapshot: not in this file, but counted.
uint64_t calls_since_snapshot(Runtime& rt, ByteBuffer& live);

// The threads that made calls since they were paused (a pause they gave up: kMaxPauseNs).
uint32_t threads_active_since_paused(Runtime& rt);

}  // namespace lockscope::runtime
