// Every kind of glibc mutex, made by its attributes, with what the runtime is expected to do with
// each: keep its owner in its `__count` (lock_owner.h), take it with glibc's trylock done inline
// (inline_trylock.h). Shared by the tests that check those against the real glibc.
#pragma once

#include <gtest/gtest.h>
#include <pthread.h>

namespace lockscope::runtime {

struct MutexKind {
  const char* name;
  int type;
  int protocol;
  int robust;
  int pshared;
  bool owner_word;      // has an owner word
  bool inline_trylock;  // its trylock is done inline
};

inline constexpr MutexKind kMutexKinds[] = {
    {"normal", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, PTHREAD_MUTEX_STALLED,
     PTHREAD_PROCESS_PRIVATE, true, true},
    {"errorcheck", PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PRIO_NONE, PTHREAD_MUTEX_STALLED,
     PTHREAD_PROCESS_PRIVATE, true, true},
    {"adaptive", PTHREAD_MUTEX_ADAPTIVE_NP, PTHREAD_PRIO_NONE, PTHREAD_MUTEX_STALLED,
     PTHREAD_PROCESS_PRIVATE, true, true},
    {"recursive", PTHREAD_MUTEX_RECURSIVE, PTHREAD_PRIO_NONE, PTHREAD_MUTEX_STALLED,
     PTHREAD_PROCESS_PRIVATE, false, false},
    {"robust", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, PTHREAD_MUTEX_ROBUST,
     PTHREAD_PROCESS_PRIVATE, false, false},
    {"priority-inherit", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT, PTHREAD_MUTEX_STALLED,
     PTHREAD_PROCESS_PRIVATE, false, false},
    {"priority-protect", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_PROTECT, PTHREAD_MUTEX_STALLED,
     PTHREAD_PROCESS_PRIVATE, false, false},
    {"process-shared", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, PTHREAD_MUTEX_STALLED,
     PTHREAD_PROCESS_SHARED, false, true},
};
inline constexpr const MutexKind& kRecursiveMutex = kMutexKinds[3];

inline void init_mutex(pthread_mutex_t& mutex, const MutexKind& kind) {
  pthread_mutexattr_t attr;
  ASSERT_EQ(pthread_mutexattr_init(&attr), 0);
  ASSERT_EQ(pthread_mutexattr_settype(&attr, kind.type), 0);
  ASSERT_EQ(pthread_mutexattr_setprotocol(&attr, kind.protocol), 0);
  ASSERT_EQ(pthread_mutexattr_setrobust(&attr, kind.robust), 0);
  ASSERT_EQ(pthread_mutexattr_setpshared(&attr, kind.pshared), 0);
  ASSERT_EQ(pthread_mutex_init(&mutex, &attr), 0);
  pthread_mutexattr_destroy(&attr);
}

}  // namespace lockscope::runtime
