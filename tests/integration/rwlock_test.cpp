// Read-write locks under the real runtime (the other primitives: primitives_test.cpp):
// each fixture's own output and exit status are unchanged, and every call site (found by its
// "// @marker" line) has exactly the counts, failures, waits and qualifiers the fixture produces.
#include <gtest/gtest.h>

#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

using format::Operation;
using format::Primitive;

// ---------------------------------------------------------------------------------------------
// Read-write locks.

TEST(RwLock, ReadersNeverWaitForReaders) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "rwlock_sides", {"3", "200"});
  const std::string f = "rwlock_sides";
  const FoundSite reads = find_site(process, f, "reader-rdlock", Operation::kReadLock);
  ASSERT_NE(reads.site, nullptr);
  const LockSummary& lock = *reads.lock;
  EXPECT_EQ(lock.primitive, Primitive::kRwLock);
  EXPECT_EQ(lock_kind_name(lock), "rwlock");
  EXPECT_EQ(reads.site->count, 600u);
  EXPECT_EQ(reads.site->failed, 0u);
  EXPECT_EQ(reads.site->contended, 0u) << "readers only: every tryrdlock-first succeeds";
  EXPECT_EQ(reads.site->behind_readers, 0u);
  EXPECT_EQ(reads.site->behind_writer, 0u);
  EXPECT_EQ(reads.site->location.function, "reader");
  const SiteSummary* unlocks = site_of(lock, f, "reader-unlock", Operation::kReadUnlock);
  ASSERT_NE(unlocks, nullptr) << "a reader's unlock is a read unlock";
  EXPECT_EQ(unlocks->count, 600u);
  EXPECT_EQ(lock.read_side.acquisitions, 600u);
  EXPECT_EQ(lock.write_side.acquisitions, 0u);
  EXPECT_EQ(lock.acquisitions, 600u);
  EXPECT_EQ(lock.releases, 600u);
  EXPECT_EQ(lock.read_side.wait.total(), 600u) << "each acquisition in exactly one bucket";
}

// An rwlock whose first call lockscope saw was an unlock (its read lock taken where the runtime
// cannot see: a library opened with RTLD_DEEPBIND) was a mutex in every report: that unlock,
// whose side is not known, named the lock's kind. The write locks after it do.
TEST(RwLock, AnUnlockSeenFirstDoesNotMakeItAMutex) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "rwlock_unseen_lock", {"10"});
  const FoundSite writes =
      find_site(process, "rwlock_unseen_lock", "wrlock", Operation::kWriteLock);
  ASSERT_NE(writes.site, nullptr);
  EXPECT_EQ(writes.site->count, 10u);
  EXPECT_EQ(writes.lock->primitive, Primitive::kRwLock);
  EXPECT_EQ(lock_kind_name(*writes.lock), "rwlock");
  const SiteSummary* unseen =
      site_of(*writes.lock, "rwlock_unseen_lock", "unseen-unlock", Operation::kUnlock);
  ASSERT_NE(unseen, nullptr) << "the unlock of a side not seen is a plain unlock";
  EXPECT_EQ(unseen->count, 1u);
}

TEST(RwLock, WriterBehindReadersAndReaderBehindWriterAreToldApart) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "rwlock_sides", {"1", "1"});
  const std::string f = "rwlock_sides";

  const FoundSite writer = find_site(process, f, "writer-behind-readers", Operation::kWriteLock);
  ASSERT_NE(writer.site, nullptr);
  EXPECT_EQ(writer.site->count, 1u);
  EXPECT_EQ(writer.site->contended, 1u);
  EXPECT_EQ(writer.site->failed, 0u);
  EXPECT_EQ(writer.site->behind_readers, 1u) << "the writer waited while main held a read lock";
  EXPECT_EQ(writer.site->behind_writer, 0u);
  EXPECT_GE(writer.site->wait_sum_ns, 2 * kMs);
  EXPECT_EQ(report_buckets(writer.site->wait)[4], 1u);
  const LockSummary& first = *writer.lock;
  EXPECT_EQ(first.primitive, Primitive::kRwLock);
  EXPECT_EQ(first.init_site.line, marker_line(f, "rwlock-init"));
  EXPECT_TRUE(first.flags & format::kLockInitSeen);
  EXPECT_TRUE(first.flags & format::kLockDestroyed);
  const SiteSummary* main_read = site_of(first, f, "main-rdlock", Operation::kReadLock);
  ASSERT_NE(main_read, nullptr);
  EXPECT_EQ(main_read->count, 1u);
  EXPECT_EQ(main_read->contended, 0u);
  ASSERT_NE(site_of(first, f, "main-rdunlock", Operation::kReadUnlock), nullptr);
  ASSERT_NE(site_of(first, f, "writer-behind-readers-unlock", Operation::kWriteUnlock), nullptr);
  EXPECT_EQ(first.read_side.acquisitions, 1u);
  EXPECT_EQ(first.write_side.acquisitions, 1u);
  EXPECT_EQ(first.write_side.contended, 1u);
  EXPECT_EQ(first.read_side.contended, 0u);
  EXPECT_GE(first.write_side.wait_sum_ns, 2 * kMs);
  EXPECT_EQ(first.read_side.wait_sum_ns, 0u);
  EXPECT_EQ(first.releases, 2u);

  const FoundSite reader = find_site(process, f, "reader-behind-writer", Operation::kReadLock);
  ASSERT_NE(reader.site, nullptr);
  EXPECT_NE(reader.lock, writer.lock);
  EXPECT_EQ(reader.site->count, 1u);
  EXPECT_EQ(reader.site->contended, 1u);
  EXPECT_EQ(reader.site->behind_writer, 1u) << "the reader waited while main held the write lock";
  EXPECT_EQ(reader.site->behind_readers, 0u);
  EXPECT_GE(reader.site->wait_sum_ns, 2 * kMs);
  const SiteSummary* main_write = site_of(*reader.lock, f, "main-wrlock", Operation::kWriteLock);
  ASSERT_NE(main_write, nullptr);
  EXPECT_EQ(main_write->count, 1u);
  EXPECT_EQ(main_write->contended, 0u);
  ASSERT_NE(site_of(*reader.lock, f, "main-wrunlock", Operation::kWriteUnlock), nullptr);
  ASSERT_NE(site_of(*reader.lock, f, "reader-behind-writer-unlock", Operation::kReadUnlock),
            nullptr);
  EXPECT_EQ(reader.lock->read_side.contended, 1u);
  EXPECT_EQ(reader.lock->write_side.contended, 0u);

  EXPECT_GE(most_waited(process, Primitive::kRwLock), 2 * kMs);
  EXPECT_EQ(most_waited(process, Primitive::kMutex), 0u) << "rwlock waits are not mutex waits";
}

TEST(RwLock, ErrorCodesAreFailedAcquisitions) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "rwlock_sides", {"1", "1"});
  const std::string f = "rwlock_sides";
  const FoundSite held = find_site(process, f, "err-wrlock", Operation::kWriteLock);
  ASSERT_NE(held.site, nullptr);
  const LockSummary& lock = *held.lock;
  EXPECT_EQ(held.site->count, 1u);
  EXPECT_EQ(held.site->failed, 0u);

  struct Expected {
    const char* marker;
    Operation op;
    uint64_t failed;
  };
  const Expected expected[] = {
      {"err-relock", Operation::kWriteLock, 1},            // EDEADLK
      {"err-rdlock-by-writer", Operation::kReadLock, 1},   // EDEADLK
      {"err-tryrdlock", Operation::kTryReadLock, 1},       // EBUSY
      {"err-trywrlock", Operation::kTryWriteLock, 1},      // EBUSY
      {"err-timedwrlock", Operation::kTimedWriteLock, 1},  // ETIMEDOUT
      {"err-timedrdlock", Operation::kTimedReadLock, 1},   // ETIMEDOUT
      {"err-clockwrlock", Operation::kClockWriteLock, 1},  // ETIMEDOUT
      {"err-trywrlock-free", Operation::kTryWriteLock, 0},
      {"err-rdlock-errno", Operation::kReadLock, 0},
  };
  for (const Expected& e : expected) {
    SCOPED_TRACE(e.marker);
    const SiteSummary* site = site_of(lock, f, e.marker, e.op);
    ASSERT_NE(site, nullptr);
    EXPECT_EQ(site->count, 1u);
    EXPECT_EQ(site->failed, e.failed);
  }
  for (const auto& [marker, op] : {std::pair{"err-relock", Operation::kWriteLock},
                                   std::pair{"err-rdlock-by-writer", Operation::kReadLock}})
    EXPECT_EQ(site_of(lock, f, marker, op)->wait_sum_ns, 0u) << marker << ": EDEADLK is not a wait";
  // A timed-out wait is still a wait, begun while main held the write lock.
  for (const auto& [marker, op] : {std::pair{"err-timedwrlock", Operation::kTimedWriteLock},
                                   std::pair{"err-timedrdlock", Operation::kTimedReadLock},
                                   std::pair{"err-clockwrlock", Operation::kClockWriteLock}}) {
    SCOPED_TRACE(marker);
    const SiteSummary* site = site_of(lock, f, marker, op);
    ASSERT_NE(site, nullptr);
    EXPECT_GE(site->wait_sum_ns, 1 * kMs);
    EXPECT_EQ(site->behind_writer, 1u);
    EXPECT_EQ(site->behind_readers, 0u);
  }
  EXPECT_EQ(lock.write_side.acquisitions, 2u);
  EXPECT_EQ(lock.write_side.failed, 4u);
  EXPECT_EQ(lock.read_side.acquisitions, 1u);
  EXPECT_EQ(lock.read_side.failed, 3u);
  EXPECT_EQ(lock.acquisitions, 3u);
  EXPECT_EQ(lock.failed, 7u);
  EXPECT_EQ(lock.releases, 3u);
}

}  // namespace
}  // namespace lockscope::testing
