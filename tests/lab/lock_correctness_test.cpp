// One correctness suite, instantiated for every lock in LabLocks (abseil/Concurrency Kit style).
// It checks mutual exclusion with an occupancy counter (atomic, so it also works as a detector when
// the lock is broken) and with plain data that only the lock protects — the TSan preset runs this
// suite, so a lock that fails to order its critical sections is also reported as a data race.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "bench/lock_catalog.h"
#include "bench/mutex_workload.h"

namespace lockscope::lab {
namespace {

template <class List>
struct GtestTypesOf;
template <Lockable... Locks>
struct GtestTypesOf<LockList<Locks...>> {
  using type = ::testing::Types<Locks...>;
};

// Small enough for TSan on two shared cores, large enough for real interleavings.
constexpr int kThreads = 4;
#if defined(__SANITIZE_THREAD__)
constexpr int kIterationsPerThread = 1500;
#else
constexpr int kIterationsPerThread = 20000;
#endif

template <class L>
class LockCorrectnessTest : public ::testing::Test {};

struct LockNames {
  template <class L>
  static std::string GetName(int) {
    std::string name(L::kName);
    for (char& c : name) {
      if (c == '-') c = '_';
    }
    return name;
  }
};

TYPED_TEST_SUITE(LockCorrectnessTest, GtestTypesOf<LabLocks>::type, LockNames);

// lock() waits while another thread holds the lock, returns once it is released, and then sees
// what the holder wrote inside its critical section. A lock() that returned at once (or an
// unlock() that released nothing) fails the first or the last check; a waiter that is slow to
// start only makes the first check pass trivially, never fail.
TYPED_TEST(LockCorrectnessTest, LockWaitsForTheHolderAndSeesItsWrites) {
  static_assert(Lockable<TypeParam>);
  TypeParam lock;
  std::uint64_t written_under_lock = 0;  // plain: only the lock orders it
  std::atomic<bool> waiter_started{false};
  std::atomic<bool> waiter_acquired{false};
  std::uint64_t seen_by_waiter = 0;
  lock.lock();
  std::thread waiter([&] {
    waiter_started.store(true);
    lock.lock();
    waiter_acquired.store(true);
    seen_by_waiter = written_under_lock;
    lock.unlock();
  });
  while (!waiter_started.load()) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(waiter_acquired.load()) << "lock() returned while another thread held the lock";
  written_under_lock = 0x5eed;
  lock.unlock();
  waiter.join();
  EXPECT_TRUE(waiter_acquired.load());
  EXPECT_EQ(seen_by_waiter, 0x5eedu);
}

TYPED_TEST(LockCorrectnessTest, UncontendedLockUnlockAndTryLock) {
  TypeParam lock;
  lock.lock();
  lock.unlock();
  ASSERT_TRUE(lock.try_lock());
  lock.unlock();
  std::lock_guard<TypeParam> guard(lock);  // BasicLockable is enough for the standard guards
}

TYPED_TEST(LockCorrectnessTest, TryLockFailsWhileAnotherThreadHoldsIt) {
  TypeParam lock;
  lock.lock();
  bool acquired_while_held = true;
  std::thread([&] { acquired_while_held = lock.try_lock(); }).join();
  EXPECT_FALSE(acquired_while_held);
  lock.unlock();
  bool acquired_after_release = false;
  std::thread([&] {
    acquired_after_release = lock.try_lock();
    if (acquired_after_release) lock.unlock();
  }).join();
  EXPECT_TRUE(acquired_after_release);
}

TYPED_TEST(LockCorrectnessTest, MutualExclusionUnderContention) {
  TypeParam lock;
  std::atomic<int> occupants{0};
  std::atomic<int> violations{0};
  std::uint64_t counter = 0;  // plain: only the lock protects it
  std::atomic<int> arrived{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Start together, or the first thread may finish before the last one exists.
      arrived.fetch_add(1);
      while (arrived.load() < kThreads) std::this_thread::yield();
      for (int i = 0; i < kIterationsPerThread; ++i) {
        // Every third acquisition goes through try_lock, retried until it succeeds.
        if ((i + t) % 3 == 0) {
          while (!lock.try_lock()) std::this_thread::yield();
        } else {
          lock.lock();
        }
        if (occupants.fetch_add(1, std::memory_order_relaxed) != 0) violations.fetch_add(1);
        const std::uint64_t seen = counter;
        busy_work(static_cast<std::uint32_t>(i % 8));
        counter = seen + 1;
        occupants.fetch_sub(1, std::memory_order_relaxed);
        lock.unlock();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_EQ(counter, static_cast<std::uint64_t>(kThreads) * kIterationsPerThread);
}

TYPED_TEST(LockCorrectnessTest, TwoLocksOfTheSameTypeNest) {
  // Queue locks take their nodes from a per-thread stack: nesting must hand out distinct nodes.
  TypeParam outer, inner;
  std::uint64_t both = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        std::scoped_lock<TypeParam> hold_outer(outer);
        std::scoped_lock<TypeParam> hold_inner(inner);
        ++both;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(both, 1000u);
}

TYPED_TEST(LockCorrectnessTest, BenchmarkWorkloadVerifiesItsCounter) {
  const MutexRun run = run_mutex_workload<TypeParam>(MutexWorkload{
      .threads = 2, .duration_s = 0, .iterations = 1000, .cs_work = 2, .outside_work = 2});
  EXPECT_EQ(total_acquisitions(run), 2000u);
  EXPECT_NO_THROW(verify_mutual_exclusion(run, TypeParam::kName));
}

TEST(LockCatalogTest, NamesAreUniqueAndVisitable) {
  const std::vector<std::string> names = LabLocks::names();
  EXPECT_EQ(names.size(), 11u);
  for (const std::string& name : names) {
    int visits = 0;
    EXPECT_TRUE(LabLocks::visit(name, [&]<Lockable L>() { visits += L::kName == name ? 1 : 100; }));
    EXPECT_EQ(visits, 1) << name;
  }
  EXPECT_FALSE(LabLocks::visit("no-such-lock", []<Lockable L>() {}));
}

}  // namespace
}  // namespace lockscope::lab
