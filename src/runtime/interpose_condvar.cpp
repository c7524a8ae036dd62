// Condition waits: passed through, with the waiting mutex's hold clock stopped for the wait (see
// condition_wait in recorder.h). Their own statistics are issue 4's; the mutex's are kept honest.
#include <pthread.h>

#include "runtime/real_functions.h"
#include "runtime/recorder.h"

using lockscope::runtime::real;
using lockscope::runtime::resolve_real_functions;

#define LOCKSCOPE_EXPORT extern "C" __attribute__((visibility("default")))

LOCKSCOPE_EXPORT int pthread_cond_wait(pthread_cond_t* condition, pthread_mutex_t* mutex) {
  if (!real().cond_wait) resolve_real_functions();
  return lockscope::runtime::condition_wait(mutex,
                                            [&] { return real().cond_wait(condition, mutex); });
}

LOCKSCOPE_EXPORT int pthread_cond_timedwait(pthread_cond_t* condition, pthread_mutex_t* mutex,
                                            const timespec* deadline) {
  if (!real().cond_timedwait) resolve_real_functions();
  return lockscope::runtime::condition_wait(
      mutex, [&] { return real().cond_timedwait(condition, mutex, deadline); });
}

LOCKSCOPE_EXPORT int pthread_cond_clockwait(pthread_cond_t* condition, pthread_mutex_t* mutex,
                                            clockid_t clock, const timespec* deadline) {
  if (!real().cond_clockwait) resolve_real_functions();
  return lockscope::runtime::condition_wait(
      mutex, [&] { return real().cond_clockwait(condition, mutex, clock, deadline); });
}
