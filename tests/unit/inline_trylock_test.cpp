// glibc's trylock done inline (src/runtime/inline_trylock.h), against the real glibc: for each kind
// it takes, the mutex is left byte for byte as glibc's own trylock leaves it, free or held, and
// glibc's lock, unlock and trylock then behave as after glibc's (an error-checking mutex's unlock
// by its owner succeeds, another thread's gets EPERM); every other kind is left to glibc.
#include "runtime/inline_trylock.h"

#include <errno.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/mman.h>
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

// A thread on a stack of its own has its descriptor at the very top of that memory: the search
// for the tid must stay within the descriptor (it read 4 KiB, past the end of the mapping here,
// and died of SIGSEGV; so did python3 3.11.7 at start-up).
TEST(InlineTrylock, FindsGlibcsTidInADescriptorThatEndsItsMapping) {
  constexpr size_t kStack = 256 * 1024, kPage = 4096;
  void* memory =
      mmap(nullptr, kStack + kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(memory, MAP_FAILED);
  ASSERT_EQ(mprotect(static_cast<char*>(memory) + kStack, kPage, PROT_NONE), 0);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  ASSERT_EQ(pthread_attr_setstack(&attr, memory, kStack), 0);
  struct Result {
    int offset = -2, read = 0, tid = 0;
  } result;
  pthread_t thread;
  ASSERT_EQ(pthread_create(
                &thread, &attr,
                [](void* arg) -> void* {
                  auto* r = static_cast<Result*>(arg);
                  r->offset = find_glibc_tid_offset();
                  r->tid = own_tid();
                  if (r->offset >= 0) r->read = glibc_tid(r->offset);
                  return nullptr;
                },
                &result),
            0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  munmap(memory, kStack + kPage);
  ASSERT_GE(result.offset, 0);
  EXPECT_EQ(result.read, result.tid);
}

}  // namespace
}  // namespace lockscope::runtime
