// Where the runtime keeps a mutex's owner (src/runtime/lock_owner.h): in the mutex's own __count
// for the kinds whose __count glibc leaves alone, and only for those. Against the real glibc: a
// token written there survives every call the program can make on the mutex (so the program's
// calls behave as without it), while a recursive mutex's __count is glibc's own count. And a word
// names its owner only in the fork generation that wrote it.
#include "runtime/lock_owner.h"

#include <errno.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <time.h>

#include "mutex_kinds.h"

namespace lockscope::runtime {
namespace {

TEST(LockOwner, OnlyTheMutexKindsThatLeaveTheirCountAloneHaveAnOwnerWord) {
  pthread_mutex_t initialized = PTHREAD_MUTEX_INITIALIZER;
  EXPECT_EQ(mutex_owner_word(&initialized), &initialized.__data.__count);
  for (const MutexKind& kind : kMutexKinds) {
    SCOPED_TRACE(kind.name);
    pthread_mutex_t mutex;
    init_mutex(mutex, kind);
    EXPECT_EQ(mutex_owner_word(&mutex) != nullptr, kind.owner_word);
    ASSERT_EQ(pthread_mutex_destroy(&mutex), 0);
    EXPECT_EQ(mutex_owner_word(&mutex), nullptr) << "a destroyed mutex has none";
  }
}

// Every call a program makes on a mutex with an owner word, with a token in it: each returns what
// it returns without one, and glibc leaves the token as it was.
TEST(LockOwner, GlibcLeavesAnOwnerWordAloneThroughEveryCallOnTheMutex) {
  constexpr uint32_t kToken = owner_token(12345, 7);
  for (const MutexKind& kind : kMutexKinds) {
    if (!kind.owner_word) continue;
    SCOPED_TRACE(kind.name);
    pthread_mutex_t mutex;
    init_mutex(mutex, kind);
    uint32_t* word = mutex_owner_word(&mutex);
    ASSERT_NE(word, nullptr);
    *word = kToken;
    ASSERT_EQ(pthread_mutex_lock(&mutex), 0);
    EXPECT_EQ(pthread_mutex_trylock(&mutex), EBUSY);
    if (kind.type == PTHREAD_MUTEX_ERRORCHECK) {
      EXPECT_EQ(pthread_mutex_lock(&mutex), EDEADLK);
    }
    pthread_cond_t condition = PTHREAD_COND_INITIALIZER;
    timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_nsec += 1000000;
    if (deadline.tv_nsec >= 1000000000) {
      deadline.tv_nsec -= 1000000000;
      ++deadline.tv_sec;
    }
    EXPECT_EQ(pthread_cond_timedwait(&condition, &mutex, &deadline), ETIMEDOUT);
    EXPECT_EQ(pthread_mutex_unlock(&mutex), 0);
    if (kind.type == PTHREAD_MUTEX_ERRORCHECK) {
      EXPECT_EQ(pthread_mutex_unlock(&mutex), EPERM);
    }
    EXPECT_EQ(pthread_mutex_trylock(&mutex), 0);
    EXPECT_EQ(pthread_mutex_unlock(&mutex), 0);
    timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    EXPECT_EQ(pthread_mutex_timedlock(&mutex, &now), 0);
    EXPECT_EQ(pthread_mutex_unlock(&mutex), 0);
    EXPECT_EQ(*word, kToken);
    EXPECT_EQ(pthread_mutex_destroy(&mutex), 0) << "a token does not make the mutex busy";
    pthread_cond_destroy(&condition);
  }
}

// Why a recursive mutex keeps its owner in its slot: glibc counts its depth in __count.
TEST(LockOwner, ARecursiveMutexsCountIsGlibcsOwn) {
  pthread_mutex_t mutex;
  init_mutex(mutex, kRecursiveMutex);
  ASSERT_EQ(pthread_mutex_lock(&mutex), 0);
  ASSERT_EQ(pthread_mutex_lock(&mutex), 0);
  EXPECT_EQ(mutex.__data.__count, 2u);
  pthread_mutex_unlock(&mutex);
  pthread_mutex_unlock(&mutex);
  pthread_mutex_destroy(&mutex);
}

TEST(LockOwner, AWordNamesItsOwnerOnlyInTheForkGenerationThatWroteIt) {
  const uint32_t mine = owner_token(4321, 3);
  EXPECT_EQ(word_owner(owner_token(777, 3), mine), 777u);
  EXPECT_EQ(word_owner(mine, mine), 4321u);
  EXPECT_EQ(word_owner(owner_token(777, 2), mine), 0u) << "a parent's, copied by fork";
  EXPECT_EQ(word_owner(0, mine), 0u) << "never written";
  EXPECT_EQ(word_owner(owner_token((1u << 22) - 1, 3), mine), (1u << 22) - 1) << "the largest tid";
  EXPECT_NE(owner_token(1, 1), 0u) << "a token is never the zero of a new mutex";
}

}  // namespace
}  // namespace lockscope::runtime
