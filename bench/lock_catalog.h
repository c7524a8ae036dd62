// Every lock the lab knows, by command-line name, as one compile-time list.
//
// The typed correctness suite, the mutex scenario and `--locks` all iterate this one list, so
// adding an algorithm is: write its header in bench/locks/, add it to LabLocks below.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/locks/clh_lock.h"
#include "bench/locks/futex_mutex.h"
#include "bench/locks/lock_concept.h"
#include "bench/locks/mcs_lock.h"
#include "bench/locks/pthread_mutex_lock.h"
#include "bench/locks/queue_lock_adapter.h"
#include "bench/locks/spin_then_park_mutex.h"
#include "bench/locks/std_mutex_lock.h"
#include "bench/locks/tas_spinlock.h"
#include "bench/locks/ticket_lock.h"
#include "bench/locks/ttas_backoff_spinlock.h"

namespace lockscope::lab {

template <Lockable... Locks>
struct LockList {
  // Calls visitor.template operator()<L>() for each lock type, in order.
  template <class Visitor>
  static void for_each(Visitor&& visitor) {
    (visitor.template operator()<Locks>(), ...);
  }
  // Calls visitor for the lock named `name`; false when there is none.
  template <class Visitor>
  static bool visit(std::string_view name, Visitor&& visitor) {
    return ((name == Locks::kName ? (visitor.template operator()<Locks>(), true) : false) || ...);
  }
  static std::vector<std::string> names() { return {std::string(Locks::kName)...}; }
};

using LabLocks =
    LockList<PthreadNormalMutex, PthreadAdaptiveMutex, PthreadPiMutex, StdMutex, TasSpinlock,
             TtasBackoffSpinlock, TicketLock, WithThreadLocalNode<McsLock>,
             WithThreadLocalNode<ClhLock>, FutexMutex, SpinThenParkMutex>;

}  // namespace lockscope::lab
