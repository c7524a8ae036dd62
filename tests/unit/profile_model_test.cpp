// The model's derived figures: lock totals and sides from call sites, kind names.
#include "analysis/profile_model.h"

#include <gtest/gtest.h>

namespace lockscope {
namespace {

using format::Operation;

SiteSummary site(Operation op, uint64_t count, uint64_t contended = 0, uint64_t failed = 0,
                 uint64_t wait_ns = 0) {
  SiteSummary s;
  s.operation = op;
  s.count = count;
  s.contended = contended;
  s.failed = failed;
  s.wait_sum_ns = wait_ns * contended;  // each contended call waited wait_ns
  s.wait_max_ns = wait_ns;
  if (contended) s.wait.add(LogHistogramLayout::bucket_of(wait_ns), contended);
  return s;
}

TEST(ProfileModel, KindNamesCarryTypeCapacityAndSharing) {
  LockSummary lock;
  lock.kind = format::MutexKind::kRecursive;
  lock.flags = format::kLockRobust | format::kLockProcessShared;
  EXPECT_EQ(lock_kind_name(lock), "mutex/recursive+pshared+robust");
  lock = {};
  lock.primitive = format::Primitive::kBarrier;
  lock.capacity = 3;
  lock.flags = format::kLockProcessShared;
  EXPECT_EQ(lock_kind_name(lock), "barrier(3)+pshared");
  lock = {};
  lock.primitive = format::Primitive::kRwLock;
  EXPECT_EQ(lock_kind_name(lock), "rwlock");
}

TEST(ProfileModel, RwLockSidesAreKeptApartAndReleasesCounted) {
  LockSummary lock;
  lock.primitive = format::Primitive::kRwLock;
  lock.sites = {site(Operation::kReadLock, 10, 2, 0, 5000), site(Operation::kTryWriteLock, 4, 0, 3),
                site(Operation::kReadUnlock, 10), site(Operation::kWriteUnlock, 1)};
  lock.finish();
  EXPECT_EQ(lock.read_side.acquisitions, 10u);
  EXPECT_EQ(lock.read_side.contended, 2u);
  EXPECT_EQ(lock.write_side.acquisitions, 1u);
  EXPECT_EQ(lock.write_side.failed, 3u);
  EXPECT_EQ(lock.acquisitions, 11u);
  EXPECT_EQ(lock.releases, 11u);
  EXPECT_EQ(lock.wait_sum_ns, 10000u);
  EXPECT_EQ(lock.read_side.wait.total(), 10u) << "2 waits + 8 uncontended";
}

TEST(ProfileModel, ConditionReacquireJoinsTheMutexWaitButNotItsAcquisitions) {
  LockSummary mutex;
  mutex.sites = {site(Operation::kLock, 5), site(Operation::kUnlock, 5),
                 site(Operation::kCondReacquire, 3, 3, 0, 2'000'000)};
  mutex.finish();
  EXPECT_EQ(mutex.acquisitions, 5u);
  EXPECT_EQ(mutex.reacquisitions, 3u);
  EXPECT_EQ(mutex.reacquire_wait_ns, 6'000'000u);
  EXPECT_EQ(mutex.wait_sum_ns, 6'000'000u);
  EXPECT_EQ(report_buckets(mutex.waits_only)[4], 3u);
}

TEST(ProfileModel, SignalsAndPostsAreEventsNotAcquisitions) {
  LockSummary condvar;
  condvar.primitive = format::Primitive::kCondVar;
  condvar.sites = {site(Operation::kCondWait, 4, 4, 1, 1000), site(Operation::kCondSignal, 7)};
  condvar.finish();
  EXPECT_EQ(condvar.events, 7u);
  EXPECT_EQ(condvar.acquisitions, 3u) << "completed waits (one timed out)";
  EXPECT_EQ(condvar.failed, 1u);
}

}  // namespace
}  // namespace lockscope
