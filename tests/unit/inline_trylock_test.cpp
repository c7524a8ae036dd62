// glibc's trylock done inline (src/runtime/inline_trylock.h), against the real glibc: for each kind
// it takes, the mutex is left byte for byte as glibc's own trylock leaves it, free or held, and
// glibc's lock, unlock and trylock then behave as after glibc's (an error-checking mutex's unlock
// by its owner succeeds, another thread's gets EPERM); every other kind is left to glibc.
#include "runtime/inline_trylock.h"

#include <errno.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "mutex_kinds.h"

namespace lockscope::runtime {
namespace {

int own_tid() {
  return static_cast<int>(syscall(SYS_gettid));
}

bool same_bytes(const pthread_mutex_t& a, const pthread_mutex_t& b) {
  return std::memcmp(&a, &b, sizeof(a)) == 0;
}

TEST(InlineTrylock, LeavesEachKindItTakesAsGlibcsTrylockDoes) {
  for (const MutexKind& kind : kMutexKinds) {
    SCOPED_TRACE(kind.name);
    pthread_mutex_t ours, glibcs;
    init_mutex(ours, kind);
    init_mutex(glibcs, kind);
    const int result = inline_mutex_trylock(&ours, own_tid());
    if (!kind.inline_trylock) {
      EXPECT_EQ(result, -1);
      EXPECT_TRUE(same_bytes(ours, glibcs)) << "a kind left to glibc is not touched";
      continue;
    }
    ASSERT_EQ(result, 0);
    ASSERT_EQ(pthread_mutex_trylock(&glibcs), 0);
    EXPECT_TRUE(same_bytes(ours, glibcs)) << "taken";
    // Held: EBUSY both ways (an error-checking mutex's owner too), nothing written.
    EXPECT_EQ(inline_mutex_trylock(&ours, own_tid()), EBUSY);
    EXPECT_EQ(pthread_mutex_trylock(&glibcs), EBUSY);
    EXPECT_TRUE(same_bytes(ours, glibcs)) << "busy";
    // Another thread's unlock of an error-checking mutex is refused: the owner is glibc's tid.
    int foreign_unlock = 0;
    std::thread([&] { foreign_unlock = pthread_mutex_unlock(&ours); }).join();
    if (kind.type == PTHREAD_MUTEX_ERRORCHECK) {
      EXPECT_EQ(foreign_unlock, EPERM);
      EXPECT_EQ(pthread_mutex_unlock(&ours), 0);
      EXPECT_EQ(pthread_mutex_unlock(&glibcs), 0);
    } else {
      ASSERT_EQ(foreign_unlock, 0);  // glibc lets it: the mutex is free again
      ASSERT_EQ(pthread_mutex_unlock(&glibcs), 0);
    }
    EXPECT_TRUE(same_bytes(ours, glibcs)) << "released";
    // And glibc's own lock and unlock take it on from there.
    EXPECT_EQ(pthread_mutex_lock(&ours), 0);
    EXPECT_EQ(pthread_mutex_unlock(&ours), 0);
    EXPECT_TRUE(same_bytes(ours, glibcs)) << "after glibc's lock and unlock";
    pthread_mutex_destroy(&ours);
    pthread_mutex_destroy(&glibcs);
  }
}

// The tid written is glibc's own, read where glibc keeps it: in every thread, and in a fork child
// before any atfork handler could have told lockscope (glibc updates it inside fork itself).
TEST(InlineTrylock, FindsGlibcsTidInEveryThreadAndInAForkChild) {
  const int offset = find_glibc_tid_offset();
  ASSERT_GE(offset, 0);
  EXPECT_EQ(glibc_tid(offset), own_tid());
  int other = 0, other_read = -1;
  std::thread([&] {
    other = own_tid();
    other_read = glibc_tid(offset);
  }).join();
  EXPECT_EQ(other_read, other);
  EXPECT_NE(other, own_tid());
  const pid_t child = fork();
  if (child == 0) _exit(glibc_tid(offset) == own_tid() && own_tid() == getpid() ? 0 : 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace lockscope::runtime
