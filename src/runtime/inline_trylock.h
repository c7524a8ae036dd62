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
// The tid written is glibc's own (THREAD_SELF->tid), read where glibc keeps it: the thread's
// descriptor is at the thread pointer on x86-64, and the tid's offset in it is found at start-up
// as the one 4-byte field of the first 1 KiB that holds gettid() (else nothing is done inline).
// So a fork child (glibc updates the field in fork and in _Fork, before any atfork handler runs)
// and a vfork child (which shares its parent's) write what glibc would.
#pragma once

#include <errno.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

#include "runtime/glibc_lock_layout.h"

namespace lockscope::runtime {

// The offset of glibc's tid in the calling thread's descriptor when inline_mutex_trylock may
// stand in for the real trylock, else -1 (decided once at start-up).
int inline_trylock_tid_offset();

// Where glibc keeps the calling thread's tid in its descriptor: the one int of the first 1 KiB
// at the thread pointer that equals gettid() (glibc 2.36 on x86-64: 720), -1 when none or more
// than one does, or the thread pointer is not pthread_self()'s descriptor. No further: the
// descriptor (2,304 bytes in glibc 2.36) may end where its mapping does (a thread on a stack of
// its own; python3's main thread: a 4 KiB scan read past it and died of SIGSEGV at start-up).
inline constexpr int kTidScanBytes = 1024;
inline int find_glibc_tid_offset() {
  const auto* descriptor = static_cast<const int*>(__builtin_thread_pointer());
  if (reinterpret_cast<uintptr_t>(descriptor) != static_cast<uintptr_t>(pthread_self())) return -1;
  const int tid = static_cast<int>(syscall(SYS_gettid));
  int found = -1;
  for (int i = 0; i < kTidScanBytes / 4; ++i)
    if (descriptor[i] == tid) {
      if (found >= 0) return -1;
      found = i * 4;
    }
  return found;
}

// glibc's tid of the calling thread (THREAD_SELF->tid), `offset` from inline_trylock_tid_offset.
inline int glibc_tid(int offset) {
  return *reinterpret_cast<const int*>(static_cast<const char*>(__builtin_thread_pointer()) +
                                       offset);
}

// 0 or EBUSY as glibc's trylock would return; -1 when the mutex's kind is not one done here.
inline int inline_mutex_trylock(pthread_mutex_t* mutex, int tid) {
  const int type =
      __atomic_load_n(&mutex->__data.__kind, __ATOMIC_RELAXED) & glibc::kMutexTypeElisionMask;
  if ((type & ~glibc::kMutexKindMask) != 0 || type == glibc::kMutexRecursive) return -1;
  int expected = glibc::kLockWordFree;
  if (!__atomic_compare_exchange_n(&mutex->__data.__lock, &expected, glibc::kLockWordTaken, false,
                                   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
    return EBUSY;
  mutex->__data.__owner = tid;
  ++mutex->__data.__nusers;
  return 0;
}

}  // namespace lockscope::runtime
