// Barriers: each thread's wait is load imbalance (it arrived before the slowest one). The thread
// whose arrival completes the barrier does not wait: it is counted as "arrived last", per call
// site and per thread, from our own arrival count and the count given to pthread_barrier_init.
#include <pthread.h>

#include "runtime/errno_guard.h"
#include "runtime/interpose.h"
#include "runtime/lock_init.h"
#include "runtime/real_functions.h"
#include "runtime/recorder.h"

using lockscope::format::Operation;
using lockscope::runtime::real;
using lockscope::runtime::resolve_real_functions;

namespace {
auto& functions() {
  return lockscope::runtime::resolved_real();
}
}  // namespace

LOCKSCOPE_EXPORT int pthread_barrier_wait(pthread_barrier_t* barrier) {
  const uintptr_t site = CALL_SITE;
  auto* self = lockscope::runtime::current_thread();
  if (self == nullptr) return functions().barrier_wait(barrier);
  auto& rt = lockscope::runtime::g_runtime;
  bool last = false;
  {
    const lockscope::runtime::ErrnoGuard keep_errno;
    if (auto* slot =
            lockscope::runtime::locate_site(*self, barrier, Operation::kBarrierWait, site).slot) {
      const uint64_t arrival = slot->arrivals.fetch_add(1, std::memory_order_acq_rel) + 1;
      const uint32_t count = slot->capacity.load(std::memory_order_relaxed);
      last = count != 0 && arrival % count == 0;
    }
  }
  const uint64_t start = rt.clock.now();
  lockscope::runtime::sink().mark(*self, lockscope::format::TraceKind::kWaitBegin, barrier,
                                  Operation::kBarrierWait, site, start, 0);
  int result;
  {
    lockscope::runtime::BlockedScope blocked(*self, barrier, Operation::kBarrierWait, site, start);
    result = functions().barrier_wait(barrier);
  }
  const uint64_t end = rt.clock.now();
  const lockscope::runtime::ErrnoGuard keep_result_errno;  // the real wait's
  const bool failed = result != 0 && result != PTHREAD_BARRIER_SERIAL_THREAD;
  lockscope::runtime::sink().wait(*self, barrier, Operation::kBarrierWait, site,
                                  {start, end, !last, failed, last && !failed, true});
  return result;
}

LOCKSCOPE_EXPORT int pthread_barrier_init(pthread_barrier_t* barrier,
                                          const pthread_barrierattr_t* attr, unsigned count) {
  const int result = functions().barrier_init(barrier, attr, count);
  if (result == 0)
    lockscope::runtime::note_lock_init(
        barrier, lockscope::format::Primitive::kBarrier, 0,
        lockscope::runtime::process_shared_flag(attr, pthread_barrierattr_getpshared), count,
        CALL_SITE);
  return result;
}

LOCKSCOPE_EXPORT int pthread_barrier_destroy(pthread_barrier_t* barrier) {
  const int result = functions().barrier_destroy(barrier);
  if (result == 0) lockscope::runtime::note_lock_destroy(barrier);
  return result;
}
