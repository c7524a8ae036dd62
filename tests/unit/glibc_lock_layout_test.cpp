// The values the runtime reads inside glibc's lock objects (src/runtime/glibc_lock_layout.h),
// checked against the glibc these tests run on: each mutex kind's __kind bits, a robust mutex's
// __owner cookies, the lock word of a mutex a thread is blocked on, an rwlock's reader count and
// a semaphore's waiter count. The header's static_asserts check where the fields are; this checks
// what glibc writes into them, which no header declares.
#include "runtime/glibc_lock_layout.h"

#include <errno.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <thread>

#include "mutex_kinds.h"

namespace lockscope::runtime {
namespace {

// Polls `done` for up to 10 s: a thread blocks on the lock some time after it was started.
bool eventually(const std::function<bool()>& done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

int expected_kind(const MutexKind& kind) {
  int bits = kind.type;
  // A robust mutex is marked process-shared too (glibc 2.36 nptl/pthread_mutex_init.c: the
  // kernel wakes a dead owner's waiters with a shared futex wake).
  if (kind.robust == PTHREAD_MUTEX_ROBUST) bits |= glibc::kMutexRobust | glibc::kMutexProcessShared;
  if (kind.protocol == PTHREAD_PRIO_INHERIT) bits |= glibc::kMutexPrioInherit;
  if (kind.protocol == PTHREAD_PRIO_PROTECT) bits |= glibc::kMutexPrioProtect;
  if (kind.pshared == PTHREAD_PROCESS_SHARED) bits |= glibc::kMutexProcessShared;
  return bits;
}

TEST(GlibcLockLayout, EachMutexKindHasTheKindBitsTheRuntimeReads) {
  for (const MutexKind& kind : kMutexKinds) {
    SCOPED_TRACE(kind.name);
    pthread_mutex_t mutex;
    init_mutex(mutex, kind);
    // The elision flags are glibc's to set later (never without RTM and its tunable).
    EXPECT_EQ(mutex.__data.__kind & glibc::kMutexTypeSharedMask, expected_kind(kind));
    EXPECT_EQ(mutex.__data.__kind & glibc::kMutexKindMask, kind.type);
    pthread_mutex_destroy(&mutex);
  }
}

// A robust mutex whose owner died: INT_MAX in __owner until made consistent; unlocked without
// that, INT_MAX - 1 (not recoverable), which interpose_mutex.cpp's not_recoverable reads.
TEST(GlibcLockLayout, ARobustMutexsOwnerCookiesAreInconsistentThenNotRecoverable) {
  pthread_mutex_t mutex;
  init_mutex(mutex, kMutexKinds[4]);  // robust
  ASSERT_EQ(mutex.__data.__kind & glibc::kMutexRobust, glibc::kMutexRobust);
  std::thread([&] { ASSERT_EQ(pthread_mutex_lock(&mutex), 0); }).join();  // dies holding it
  ASSERT_EQ(pthread_mutex_lock(&mutex), EOWNERDEAD);
  EXPECT_EQ(mutex.__data.__owner, glibc::kMutexInconsistent);
  ASSERT_EQ(pthread_mutex_unlock(&mutex), 0);
  EXPECT_EQ(mutex.__data.__owner, glibc::kMutexNotRecoverable);
  EXPECT_EQ(pthread_mutex_trylock(&mutex), ENOTRECOVERABLE);
}

// lock_owner.h's mutex_word_contended: the holder sees 2 once a thread waits; 1 before.
TEST(GlibcLockLayout, TheLockWordSaysContendedOnceAThreadWaits) {
  for (const MutexKind& kind : kMutexKinds) {
    if (!kind.owner_word) continue;  // the kinds whose lock word is read
    SCOPED_TRACE(kind.name);
    pthread_mutex_t mutex;
    init_mutex(mutex, kind);
    EXPECT_EQ(mutex.__data.__lock, glibc::kLockWordFree);
    ASSERT_EQ(pthread_mutex_lock(&mutex), 0);
    EXPECT_EQ(mutex.__data.__lock, glibc::kLockWordTaken);
    std::thread waiter([&] {
      pthread_mutex_lock(&mutex);
      pthread_mutex_unlock(&mutex);
    });
    EXPECT_TRUE(eventually([&] {
      return __atomic_load_n(&mutex.__data.__lock, __ATOMIC_RELAXED) == glibc::kLockWordContended;
    }));
    pthread_mutex_unlock(&mutex);
    waiter.join();
    EXPECT_EQ(mutex.__data.__lock, glibc::kLockWordFree);
    pthread_mutex_destroy(&mutex);
  }
}

// interpose_rwlock.cpp's rwlock_blocker: readers counted above the shift, the writer's tid.
TEST(GlibcLockLayout, AnRwlockCountsReadersAboveTheShiftAndNamesItsWriter) {
  pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
  ASSERT_EQ(pthread_rwlock_rdlock(&rwlock), 0);
  ASSERT_EQ(pthread_rwlock_rdlock(&rwlock), 0);
  EXPECT_EQ(rwlock.__data.__readers >> glibc::kRwlockReaderShift, 2u);
  EXPECT_EQ(rwlock.__data.__cur_writer, 0);
  pthread_rwlock_unlock(&rwlock);
  pthread_rwlock_unlock(&rwlock);
  EXPECT_EQ(rwlock.__data.__readers >> glibc::kRwlockReaderShift, 0u);
  ASSERT_EQ(pthread_rwlock_wrlock(&rwlock), 0);
  EXPECT_EQ(rwlock.__data.__cur_writer, static_cast<int>(syscall(SYS_gettid)));
  pthread_rwlock_unlock(&rwlock);
  pthread_rwlock_destroy(&rwlock);
}

// interpose_semaphore.cpp's waiters_of: the value below the shift, the blocked waiters above it.
TEST(GlibcLockLayout, ASemaphoreCountsItsWaitersAboveTheShift) {
  sem_t semaphore;
  ASSERT_EQ(sem_init(&semaphore, 0, 3), 0);
  const auto data = [&] {
    return __atomic_load_n(reinterpret_cast<const uint64_t*>(&semaphore), __ATOMIC_RELAXED);
  };
  EXPECT_EQ(data() & 0xffffffffu, 3u);
  EXPECT_EQ(data() >> glibc::kSemWaitersShift, 0u);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(sem_wait(&semaphore), 0);
  std::thread waiter([&] { sem_wait(&semaphore); });
  EXPECT_TRUE(eventually([&] { return (data() >> glibc::kSemWaitersShift) == 1; }));
  sem_post(&semaphore);
  waiter.join();
  EXPECT_EQ(data() >> glibc::kSemWaitersShift, 0u);
  sem_destroy(&semaphore);
}

}  // namespace
}  // namespace lockscope::runtime
