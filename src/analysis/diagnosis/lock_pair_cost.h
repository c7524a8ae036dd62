// The price of an uncontended acquire + release pair on the machine that makes the report
// (pthread_mutex_lock + unlock, pthread_rwlock_rdlock + unlock, pthread_spin_lock + unlock): what
// the hot-lock and false-sharing rules multiply acquisition counts by.
#pragma once

#include "common/profile_format.h"

namespace lockscope {

// Nanoseconds per pair of that primitive (0 for those that are not locks), measured once per
// process (the first call for it; about 2 ms), then the same figure for every later call, so that
// every finding of one report uses one price.
double uncontended_pair_ns(format::Primitive primitive);

}  // namespace lockscope
