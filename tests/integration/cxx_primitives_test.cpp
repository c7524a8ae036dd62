// The C++ standard library's locks and condition variables under the real runtime. At -O0 their
// call sites are in libstdc++'s own functions, so each object is found by the address of its
// pthread primitive, which the fixture prints to stderr; the counts are summed per operation.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

using format::Operation;
using format::Primitive;

struct Recorded {
  ProcessProfile process;
  std::map<std::string, uint64_t> addresses;  // "mutex" -> address of its pthread object
};

Recorded record_unchanged(const TemporaryDirectory& dir) {
  const CommandResult plain = run_command({fixture("cxx_primitives")});
  EXPECT_EQ(plain.exit_status, 0) << plain.out;
  const CommandResult profiled =
      run_lockscope({"record", "-o", dir.path(), "--", fixture("cxx_primitives")});
  EXPECT_EQ(profiled.exit_status, plain.exit_status) << profiled.out << profiled.err;
  EXPECT_EQ(profiled.signal, 0);
  EXPECT_EQ(profiled.out, plain.out);
  Recorded recorded;
  std::istringstream err(profiled.err);
  for (std::string line; std::getline(err, line);) {
    std::istringstream words(line);
    std::string tag, name, address;
    if (words >> tag >> name >> address && tag == "address")
      recorded.addresses[name] = std::stoull(address, nullptr, 16);
  }
  Profile profile = load_profile(dir.path());
  EXPECT_TRUE(profile.problems.empty());
  if (profile.processes.size() != 1) {
    ADD_FAILURE() << "expected one process, got " << profile.processes.size();
    return recorded;
  }
  recorded.process = profile.processes[0];
  return recorded;
}

struct OpTotals {
  uint64_t count = 0;
  uint64_t failed = 0;
  uint64_t contended = 0;
  uint64_t wait_sum_ns = 0;
  uint64_t with_waiters = 0;
  uint64_t without_waiters = 0;
  uint64_t behind_readers = 0;
};

OpTotals totals(const LockSummary& lock, Operation op) {
  OpTotals sum;
  for (const SiteSummary& site : lock.sites) {
    if (site.operation != op) continue;
    sum.count += site.count;
    sum.failed += site.failed;
    sum.contended += site.contended;
    sum.wait_sum_ns += site.wait_sum_ns;
    sum.with_waiters += site.with_waiters;
    sum.without_waiters += site.without_waiters;
    sum.behind_readers += site.behind_readers;
  }
  return sum;
}

class CxxPrimitives : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    directory_ = new TemporaryDirectory;
    recorded_ = new Recorded(record_unchanged(*directory_));
  }
  static void TearDownTestSuite() {
    delete recorded_;
    delete directory_;
  }
  // The lock at the address the fixture printed for `name`.
  static const LockSummary* lock(const std::string& name) {
    auto it = recorded_->addresses.find(name);
    if (it == recorded_->addresses.end()) {
      ADD_FAILURE() << "the fixture printed no address for " << name;
      return nullptr;
    }
    for (const LockSummary& candidate : recorded_->process.locks)
      if (candidate.address == it->second) return &candidate;
    ADD_FAILURE() << "no lock at the address of " << name;
    return nullptr;
  }

 private:
  static TemporaryDirectory* directory_;
  static Recorded* recorded_;
};
TemporaryDirectory* CxxPrimitives::directory_ = nullptr;
Recorded* CxxPrimitives::recorded_ = nullptr;

TEST_F(CxxPrimitives, StdMutexLockAndTryLock) {
  const LockSummary* mutex = lock("mutex");
  ASSERT_NE(mutex, nullptr);
  EXPECT_EQ(mutex->primitive, Primitive::kMutex);
  EXPECT_EQ(totals(*mutex, Operation::kLock).count, 6u);
  EXPECT_EQ(totals(*mutex, Operation::kTryLock).count, 2u);
  EXPECT_EQ(totals(*mutex, Operation::kTryLock).failed, 1u) << "try_lock while held: EBUSY";
  EXPECT_EQ(mutex->acquisitions, 7u);
  EXPECT_EQ(mutex->releases, 7u);
}

TEST_F(CxxPrimitives, TimedMutexTryLockForTimesOutThroughClockLock) {
  const LockSummary* mutex = lock("timed_mutex");
  ASSERT_NE(mutex, nullptr);
  EXPECT_EQ(mutex->primitive, Primitive::kMutex);
  EXPECT_EQ(totals(*mutex, Operation::kLock).count, 1u);
  const OpTotals clock = totals(*mutex, Operation::kClockLock);
  EXPECT_EQ(clock.count, 2u) << "libstdc++ calls pthread_mutex_clocklock for try_lock_for";
  EXPECT_EQ(clock.failed, 1u) << "ETIMEDOUT";
  EXPECT_GE(clock.wait_sum_ns, 1 * kMs) << "the 2 ms timed-out wait";
  EXPECT_EQ(mutex->acquisitions, 2u);
  EXPECT_EQ(mutex->releases, 2u);
}

TEST_F(CxxPrimitives, RecursiveMutexNestedAcquisitions) {
  const LockSummary* mutex = lock("recursive_mutex");
  ASSERT_NE(mutex, nullptr);
  EXPECT_EQ(mutex->primitive, Primitive::kMutex);
  EXPECT_EQ(totals(*mutex, Operation::kLock).count, 2u);
  EXPECT_EQ(totals(*mutex, Operation::kTryLock).count, 1u);
  EXPECT_EQ(mutex->acquisitions, 3u);
  EXPECT_EQ(mutex->releases, 3u);
  EXPECT_EQ(mutex->failed, 0u);
}

TEST_F(CxxPrimitives, SharedMutexSharedAndExclusiveSides) {
  const LockSummary* rwlock = lock("shared_mutex");
  ASSERT_NE(rwlock, nullptr);
  EXPECT_EQ(rwlock->primitive, Primitive::kRwLock);
  EXPECT_EQ(totals(*rwlock, Operation::kReadLock).count, 4u);
  EXPECT_EQ(totals(*rwlock, Operation::kWriteLock).count, 3u);
  EXPECT_EQ(totals(*rwlock, Operation::kTryReadLock).failed, 1u);
  EXPECT_EQ(totals(*rwlock, Operation::kTryWriteLock).failed, 1u);
  EXPECT_EQ(rwlock->read_side.acquisitions, 4u);
  EXPECT_EQ(rwlock->read_side.failed, 1u);
  EXPECT_EQ(rwlock->write_side.acquisitions, 3u);
  EXPECT_EQ(rwlock->write_side.failed, 1u);
  EXPECT_EQ(totals(*rwlock, Operation::kReadUnlock).count, 4u);
  EXPECT_EQ(totals(*rwlock, Operation::kWriteUnlock).count, 3u);
}

TEST_F(CxxPrimitives, SharedTimedMutexTimedExclusiveWaitBehindAReader) {
  const LockSummary* rwlock = lock("shared_timed_mutex");
  ASSERT_NE(rwlock, nullptr);
  EXPECT_EQ(rwlock->primitive, Primitive::kRwLock);
  const OpTotals exclusive = totals(*rwlock, Operation::kClockWriteLock);
  EXPECT_EQ(exclusive.count, 1u) << "libstdc++ calls pthread_rwlock_clockwrlock for try_lock_for";
  EXPECT_EQ(exclusive.failed, 1u) << "ETIMEDOUT";
  EXPECT_EQ(exclusive.behind_readers, 1u) << "main held it shared";
  EXPECT_GE(exclusive.wait_sum_ns, 1 * kMs);
  EXPECT_EQ(totals(*rwlock, Operation::kReadLock).count, 1u);
  EXPECT_EQ(totals(*rwlock, Operation::kClockReadLock).count, 1u);
  EXPECT_EQ(totals(*rwlock, Operation::kClockReadLock).failed, 0u);
  EXPECT_EQ(rwlock->read_side.acquisitions, 2u);
  EXPECT_EQ(rwlock->write_side.acquisitions, 0u);
  EXPECT_EQ(rwlock->write_side.failed, 1u);
}

TEST_F(CxxPrimitives, ConditionVariableWaitNotifyAndWaitForTimeout) {
  const LockSummary* condition = lock("condition_variable");
  ASSERT_NE(condition, nullptr);
  EXPECT_EQ(condition->primitive, Primitive::kCondVar);
  EXPECT_EQ(totals(*condition, Operation::kCondWait).count, 1u);
  EXPECT_EQ(totals(*condition, Operation::kCondWait).failed, 0u);
  const OpTotals timed = totals(*condition, Operation::kCondClockWait);
  EXPECT_EQ(timed.count, 1u) << "libstdc++ calls pthread_cond_clockwait for wait_for";
  EXPECT_EQ(timed.failed, 1u) << "ETIMEDOUT";
  EXPECT_GE(timed.wait_sum_ns, 1 * kMs);
  const OpTotals signal = totals(*condition, Operation::kCondSignal);
  EXPECT_EQ(signal.count, 1u) << "notify_one";
  EXPECT_EQ(signal.with_waiters, 1u);
  EXPECT_EQ(condition->acquisitions, 1u);
  EXPECT_EQ(condition->failed, 1u);
  EXPECT_EQ(condition->events, 1u);

  const LockSummary* mutex = lock("cv_mutex");
  ASSERT_NE(mutex, nullptr);
  EXPECT_EQ(mutex->primitive, Primitive::kMutex);
  EXPECT_GE(mutex->reacquisitions, 1u) << "the mutex re-taken inside the wait";
  EXPECT_EQ(totals(*mutex, Operation::kCondReacquire).count, mutex->reacquisitions);
  EXPECT_EQ(mutex->acquisitions, 3u) << "consumer, notifier, wait_for's unique_lock";
}

TEST_F(CxxPrimitives, ConditionVariableAnyWaitAndNotifyAll) {
  const LockSummary* condition = lock("condition_variable_any");
  ASSERT_NE(condition, nullptr);
  EXPECT_EQ(condition->primitive, Primitive::kCondVar);
  EXPECT_EQ(totals(*condition, Operation::kCondWait).count, 1u);
  const OpTotals broadcast = totals(*condition, Operation::kCondBroadcast);
  EXPECT_EQ(broadcast.count, 1u) << "notify_all";
  EXPECT_EQ(broadcast.with_waiters, 1u);
  EXPECT_EQ(condition->acquisitions, 1u);

  // The user's mutex: taken by the consumer, by main, and again when the wait returns.
  const LockSummary* mutex = lock("any_mutex");
  ASSERT_NE(mutex, nullptr);
  EXPECT_EQ(mutex->acquisitions, 3u);
  EXPECT_EQ(mutex->releases, 3u);
  EXPECT_EQ(mutex->reacquisitions, 0u) << "condition_variable_any waits on its own mutex";
}

}  // namespace
}  // namespace lockscope::testing
