// The hot path, written once for every acquire and release of every primitive.
//
// acquire(): trylock first; on success the acquisition is uncontended and only counted (the hold is
// timed 1 in `hold_sample_period` times per call site); only when it fails do we read the clock,
// call the real blocking function and read the clock again. release(): the real unlock first, then
// the book-keeping (rule 3: do not lengthen the critical section we measure).
//
// The common case — an uncontended acquire or release at a site this thread has used before — is
// inline and touches only thread-local memory plus the lock's owner field: the site's stats entry
// comes from the thread's SiteCacheEntry cache, looked up before the trylock. It calls nothing and
// cannot change errno. Everything else goes to the out-of-line record_acquire/record_release,
// which save and restore errno.
//
// The paths, each in the header a reader looks for: recorder_acquire.h (acquire(): the
// trylock-first fast path), recorder_slow_path.h (acquire_slow: contended and uncached calls),
// recorder_release.h (release()), and the book-keeping they share, recorder_bookkeeping.h. The
// out-of-line parts are defined in recorder.cpp, hold_timing.cpp, lock_waits.cpp and
// lock_order_notes.cpp.
#pragma once

#include "runtime/recorder_acquire.h"
#include "runtime/recorder_bookkeeping.h"
#include "runtime/recorder_release.h"
#include "runtime/recorder_slow_path.h"
