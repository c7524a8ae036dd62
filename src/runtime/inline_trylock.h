// glibc's pthread_mutex_trylock, done inline for the mutex kinds whose trylock is one
// compare-and-swap of the lock word: normal, error-checking and adaptive, process-shared or not
// (glibc 2.36 nptl/pthread_mutex_trylock.c: lll_trylock, then __owner = the thread's tid and
// ++__nusers; EBUSY when the word was not 0). The fast path's trylock-first is then no call: the
// indirect call into glibc, its dispatch on the kind, and the registers the fast path saves
// around a call cost about 40 of the ~165 instructions lockscope added to an uncontended
// lock + unlock (bench/overhead/callgrind_pair.sh).
//
// The same three writes glibc makes, with the same ordering (a locked cmpxchg), so the program
// sees the mutex exactly as glibc's trylock leaves it; and only where glibc would make them:
// - the real trylock is glibc's own (not another preloaded tool's, which must still see the call);
// - glibc cannot be eliding locks (transactional memory): the CPU has no RTM, or GLIBC_TUNABLES
//   does not turn glibc.elision.enable on (with it, a normal mutex's trylock takes another path);
// - the kind, read here as glibc reads it (__kind & (127 | PTHREAD_MUTEX_ELISION_NP)), is 0, 2
//   or 3: recursive, robust, priority-inheriting or -protecting and elided mutexes go to glibc.
// The tid is the one glibc writes (THREAD_SELF->tid): the thread's registered tid, which the
// runtime reads from gettid() and resets in a fork child as glibc does (a vfork child shares
// both with its parent).
#pragma once

#include <errno.h>
#include <pthread.h>

#include <cstdint>

namespace lockscope::runtime {

// Whether inline_mutex_trylock may stand in for the real trylock (decided once at start-up).
bool inline_trylock_allowed();

// 0 or EBUSY as glibc's trylock would return; -1 when the mutex's kind is not one done here.
inline int inline_mutex_trylock(pthread_mutex_t* mutex, uint32_t tid) {
  constexpr int kElisionFlag = 256;  // PTHREAD_MUTEX_ELISION_NP
  const int type = __atomic_load_n(&mutex->__data.__kind, __ATOMIC_RELAXED) & (127 | kElisionFlag);
  if ((type & ~3) != 0 || type == 1) return -1;
  int expected = 0;
  if (!__atomic_compare_exchange_n(&mutex->__data.__lock, &expected, 1, false, __ATOMIC_ACQUIRE,
                                   __ATOMIC_RELAXED))
    return EBUSY;
  mutex->__data.__owner = static_cast<int>(tid);
  ++mutex->__data.__nusers;
  return 0;
}

}  // namespace lockscope::runtime
