// The questions every view and writer asks of a lock, answered once: which primitives the report
// calls locks, whose waits are lock waits, and whether a lock was used at all. They were written
// out in each writer (three copies of "was used", two of "is a lock wait"), and a fourth copy
// that drifted would have made two tables of one report disagree.
#pragma once

#include "analysis/profile_model.h"

namespace lockscope {

// Whether the report counts this primitive's waits as lock waits (mutex, rwlock): what the
// threads' LOCK WAIT and the stack formats add up. Spinning is CPU burned, not blocked, and
// condition, semaphore and barrier waits are waits for something else than a lock.
inline bool is_lock_wait_primitive(format::Primitive primitive) {
  return primitive == format::Primitive::kMutex || primitive == format::Primitive::kRwLock;
}

// Whether it is a lock (mutex, rwlock, spinlock: held, then released) rather than a condition
// variable, semaphore or barrier (waited on). The report lists the locks first, and apart.
inline bool is_lock_primitive(format::Primitive primitive) {
  return is_lock_wait_primitive(primitive) || primitive == format::Primitive::kSpinLock;
}

// Whether the program used it while profiled: acquired it, tried to and failed, or (a condvar,
// semaphore) signalled or posted it. A lock only initialised and destroyed was not.
inline bool lock_was_used(const LockSummary& lock) {
  return lock.acquisitions + lock.failed + lock.events > 0;
}

}  // namespace lockscope
