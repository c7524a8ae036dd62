// The runtime's internal lock (src/runtime/internal_lock.h) says whether the calling thread holds
// it, at every instruction of its own lock() and unlock(): a signal handler that ends the process
// asks, and would otherwise wait for ever for a lock its own interrupted thread holds (the final
// profile write, profile_writer.cpp). Checked by a storm of signals at a thread that does nothing
// but take and let go of the lock: whenever the handler is told "not this thread", nobody holds
// it (no other thread ever takes it here), so its own try_lock must succeed. And lock_within, the
// bounded wait of a thread's exit, gives up on a holder that does not let go.
#include "runtime/internal_lock.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace lockscope::runtime {
namespace {

InternalLock storm_lock;
std::atomic<bool> storm_over{false};
std::atomic<uint64_t> storm_signals{0};
std::atomic<uint64_t> storm_said_held{0};
std::atomic<uint64_t> storm_wrong{0};

void on_storm_signal(int) {
  storm_signals.fetch_add(1, std::memory_order_relaxed);
  if (storm_lock.held_by_this_thread()) {
    storm_said_held.fetch_add(1, std::memory_order_relaxed);
  } else if (storm_lock.try_lock()) {
    storm_lock.unlock();
  } else {
    // "Not this thread", yet held: by this very thread, between the lock word's change and the
    // note of its holder.
    storm_wrong.fetch_add(1, std::memory_order_relaxed);
  }
}

TEST(InternalLock, ItsHolderIsKnownAtEveryInstructionOfLockAndUnlock) {
  struct sigaction action {};
  action.sa_handler = on_storm_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  struct sigaction previous {};
  ASSERT_EQ(sigaction(SIGUSR2, &action, &previous), 0);
  std::atomic<bool> started{false};
  std::thread locker([&] {
    started.store(true);
    while (!storm_over.load(std::memory_order_relaxed)) {
      storm_lock.lock();
      storm_lock.unlock();
    }
  });
  while (!started.load()) std::this_thread::yield();
  const pthread_t target = locker.native_handle();
  // Until a few thousand signals found the lock held, or 200,000 were sent.
  for (int sent = 0; sent < 200000 && storm_said_held.load() < 5000; ++sent) {
    pthread_kill(target, SIGUSR2);
    if (sent % 64 == 0) std::this_thread::yield();
  }
  storm_over.store(true);
  locker.join();
  sigaction(SIGUSR2, &previous, nullptr);
  EXPECT_GT(storm_said_held.load(), 100u)
      << "the storm hardly ever found the lock held: " << storm_signals.load() << " signals";
  EXPECT_EQ(storm_wrong.load(), 0u) << "of " << storm_signals.load() << " signals, "
                                    << storm_said_held.load() << " found it held";
}

// lock_within waits for another holder, but only so long.
TEST(InternalLock, LockWithinGivesUpOnAHolderThatDoesNotLetGo) {
  InternalLock lock;
  std::atomic<int> stage{0};
  std::thread holder([&] {
    lock.lock();
    stage.store(1);
    while (stage.load() != 2) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    lock.unlock();
  });
  while (stage.load() != 1) std::this_thread::yield();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(lock.lock_within(50'000'000));
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(50));
  EXPECT_FALSE(lock.held_by_this_thread());
  stage.store(2);  // it lets go 20 ms from now
  EXPECT_TRUE(lock.lock_within(5'000'000'000));
  EXPECT_TRUE(lock.held_by_this_thread());
  lock.unlock();
  holder.join();
}

}  // namespace
}  // namespace lockscope::runtime
