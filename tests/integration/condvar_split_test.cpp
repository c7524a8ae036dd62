// Condition variables under the real runtime: each wait is split into waiting for the condition
// (on the condvar) and re-acquiring the mutex (a kCondReacquire site on the mutex, at the wait's
// line); timeouts are failed waits; signals and broadcasts are counted with and without waiters.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

using format::Operation;
using format::Primitive;

const std::string kFixture = "condvar_split";

ProcessProfile record_unchanged(const TemporaryDirectory& dir, std::string& err) {
  CommandResult recorded;
  ProcessProfile process = record_program_unchanged(dir, {fixture(kFixture)}, nullptr, &recorded);
  err = recorded.err;
  return process;
}
FoundSite find_site(const ProcessProfile& process, const std::string& marker, Operation op) {
  return testing::find_site(process, kFixture, marker, op);
}
const SiteSummary* site_of(const LockSummary& lock, const std::string& marker, Operation op) {
  return testing::site_of(lock, kFixture, marker, op);
}

class CondVar : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    directory_ = new TemporaryDirectory;
    err_ = new std::string;
    process_ = new ProcessProfile(record_unchanged(*directory_, *err_));
  }
  static void TearDownTestSuite() {
    delete process_;
    delete directory_;
    delete err_;
  }
  const ProcessProfile& process() const { return *process_; }
  const std::string& directory() const { return directory_->path(); }
  // The fixture's own count of how long the split waiter waited for the condition (its stderr).
  uint64_t own_condition_wait_ns() const {
    const size_t at = err_->find("split_condition_wait_ns ");
    return at == std::string::npos ? 0 : std::stoull(err_->substr(at + 24));
  }

 private:
  static TemporaryDirectory* directory_;
  static ProcessProfile* process_;
  static std::string* err_;
};
TemporaryDirectory* CondVar::directory_ = nullptr;
ProcessProfile* CondVar::process_ = nullptr;
std::string* CondVar::err_ = nullptr;

TEST_F(CondVar, TheSignallersHoldAfterSignallingIsReacquireWaitNotConditionWait) {
  const FoundSite wait = find_site(process(), "split-wait", Operation::kCondWait);
  ASSERT_NE(wait.site, nullptr);
  const LockSummary& condition = *wait.lock;
  EXPECT_EQ(condition.primitive, Primitive::kCondVar);
  EXPECT_EQ(lock_kind_name(condition), "condvar");
  EXPECT_EQ(wait.site->count, 1u);
  EXPECT_EQ(wait.site->failed, 0u);
  EXPECT_EQ(wait.site->location.function, "split_waiter");
  // The waiter waited ~2 ms for the signal (as long as the fixture saw it wait: longer on a
  // loaded machine), then ~20 ms for the mutex the signaller kept.
  const uint64_t own = own_condition_wait_ns();
  ASSERT_GE(own, 2 * kMs);
  EXPECT_GE(wait.site->wait_sum_ns, 2 * kMs);
  EXPECT_LT(wait.site->wait_sum_ns, own + 10 * kMs)
      << "the signaller's 20 ms hold leaked into the condition wait (the fixture saw " << own
      << " ns)";
  EXPECT_EQ(site_of(condition, "split-wait", Operation::kCondReacquire), nullptr)
      << "the re-acquire belongs to the mutex, not the condvar";
  EXPECT_EQ(condition.acquisitions, 1u) << "completed waits";
  EXPECT_EQ(condition.reacquisitions, 0u);

  const FoundSite reacquire = find_site(process(), "split-wait", Operation::kCondReacquire);
  ASSERT_NE(reacquire.site, nullptr) << "no re-acquire site on the mutex at the wait's line";
  const LockSummary& mutex = *reacquire.lock;
  EXPECT_EQ(mutex.primitive, Primitive::kMutex);
  EXPECT_EQ(reacquire.site->count, 1u);
  EXPECT_GE(reacquire.site->wait_sum_ns, 15 * kMs);
  EXPECT_EQ(mutex.reacquisitions, 1u);
  EXPECT_GE(mutex.reacquire_wait_ns, 15 * kMs);
  EXPECT_GE(mutex.wait_sum_ns, mutex.reacquire_wait_ns);
  // The mutex's own acquisitions: the waiter's lock and the signaller's; the re-acquire apart.
  const SiteSummary* waiter_lock = site_of(mutex, "split-lock", Operation::kLock);
  const SiteSummary* signaller_lock = site_of(mutex, "signaller-lock", Operation::kLock);
  ASSERT_NE(waiter_lock, nullptr);
  ASSERT_NE(signaller_lock, nullptr);
  EXPECT_EQ(waiter_lock->count, 1u);
  EXPECT_EQ(signaller_lock->count, 1u);
  EXPECT_EQ(mutex.acquisitions, 2u);
  EXPECT_EQ(mutex.releases, 2u);
  // Who it waited behind: the signaller's hold, taken at its lock line.
  ASSERT_EQ(reacquire.site->blame.size(), 1u);
  EXPECT_TRUE(located_at(reacquire.site->blame[0].holder_site, "condvar_split.c",
                         marker_line("condvar_split", "signaller-lock")))
      << reacquire.site->blame[0].holder_site.label;
  EXPECT_EQ(reacquire.site->blame[0].waits, 1u);
  EXPECT_EQ(reacquire.site->blame[0].wait_ns, reacquire.site->wait_sum_ns);

  const SiteSummary* signal = site_of(condition, "split-signal", Operation::kCondSignal);
  ASSERT_NE(signal, nullptr);
  EXPECT_EQ(signal->count, 1u);
  EXPECT_EQ(signal->with_waiters, 1u);
  EXPECT_EQ(signal->without_waiters, 0u);
  EXPECT_EQ(condition.events, 1u);

  // Per thread, the two waits are kept apart: the waiter's condition wait and its mutex wait.
  bool waiter_found = false;
  for (const ThreadSummary& thread : process().threads) {
    const uint64_t mutex_wait = thread.wait_ns_by_primitive[static_cast<size_t>(Primitive::kMutex)];
    if (mutex_wait < 15 * kMs) continue;
    waiter_found = true;
    const uint64_t condition_wait =
        thread.wait_ns_by_primitive[static_cast<size_t>(Primitive::kCondVar)];
    EXPECT_GE(condition_wait, 2 * kMs);
    EXPECT_LT(condition_wait, own_condition_wait_ns() + 10 * kMs);
    EXPECT_GE(thread.wait_sum_ns, 15 * kMs) << "a re-acquire is a lock wait";
  }
  EXPECT_TRUE(waiter_found) << "no thread with the ~20 ms re-acquire wait";
}

TEST_F(CondVar, TimeoutsAreFailedWaits) {
  const FoundSite timed = find_site(process(), "timed-wait", Operation::kCondTimedWait);
  ASSERT_NE(timed.site, nullptr);
  const LockSummary& condition = *timed.lock;
  EXPECT_EQ(condition.primitive, Primitive::kCondVar);
  EXPECT_EQ(condition.init_site.line, marker_line(kFixture, "timed-init"));
  EXPECT_TRUE(condition.flags & format::kLockDestroyed);
  EXPECT_EQ(timed.site->count, 1u);
  EXPECT_EQ(timed.site->failed, 1u) << "ETIMEDOUT";
  EXPECT_GE(timed.site->wait_sum_ns, 1 * kMs) << "a timed-out wait is still a wait";
  const SiteSummary* clock = site_of(condition, "clock-wait", Operation::kCondClockWait);
  ASSERT_NE(clock, nullptr);
  EXPECT_EQ(clock->count, 1u);
  EXPECT_EQ(clock->failed, 1u) << "ETIMEDOUT";
  EXPECT_GE(clock->wait_sum_ns, 1 * kMs);
  EXPECT_EQ(condition.acquisitions, 0u);
  EXPECT_EQ(condition.failed, 2u);
  EXPECT_EQ(condition.events, 0u);
  // The threads' failed calls are their sites' (before, a thread's left out its condition waits
  // that timed out, while its locks' FAILED counted them).
  uint64_t thread_failed = 0, site_failed = 0;
  for (const ThreadSummary& thread : process().threads) thread_failed += thread.failed;
  for (const LockSummary& lock : process().locks)
    for (const SiteSummary& site : lock.sites) {
      const format::OperationClass kind = format::operation_class(site.operation);
      if (kind == format::OperationClass::kAcquire || kind == format::OperationClass::kWait)
        site_failed += site.failed;
    }
  EXPECT_GE(site_failed, 2u);
  EXPECT_EQ(thread_failed, site_failed);
  // The text report's line above its call sites says so: two waits, both timed out (before:
  // "acquired 0, contended 0", beside their wait time).
  // (--addresses: the lock by its address, which the test knows, rather than by its name.)
  const CommandResult text = run_lockscope({"report", directory(), "--all", "--addresses"});
  ASSERT_EQ(text.exit_status, 0) << text.err;
  EXPECT_NE(text.out.find(fmt::format("{:#x}  condvar  waits 2 (2 failed or timed out), wait ",
                                      condition.address)),
            std::string::npos)
      << text.out;
}

TEST_F(CondVar, SignalsAndBroadcastsWithNobodyWaitingAreCountedWithoutWaiters) {
  const FoundSite first = find_site(process(), "lonely-signal", Operation::kCondSignal);
  ASSERT_NE(first.site, nullptr);
  const LockSummary& condition = *first.lock;
  EXPECT_EQ(condition.primitive, Primitive::kCondVar);
  for (const auto& [marker, op] : {std::pair{"lonely-signal", Operation::kCondSignal},
                                   std::pair{"lonely-signal-2", Operation::kCondSignal},
                                   std::pair{"lonely-broadcast", Operation::kCondBroadcast}}) {
    SCOPED_TRACE(marker);
    const SiteSummary* site = site_of(condition, marker, op);
    ASSERT_NE(site, nullptr);
    EXPECT_EQ(site->count, 1u);
    EXPECT_EQ(site->without_waiters, 1u);
    EXPECT_EQ(site->with_waiters, 0u);
  }
  EXPECT_EQ(condition.events, 3u);
  EXPECT_EQ(condition.acquisitions, 0u);
}

TEST_F(CondVar, ABroadcastToThreeWaitersWakesThreeWaitsAndThreeReacquires) {
  const FoundSite broadcast = find_site(process(), "crowd-broadcast", Operation::kCondBroadcast);
  ASSERT_NE(broadcast.site, nullptr);
  EXPECT_EQ(broadcast.site->count, 1u);
  EXPECT_EQ(broadcast.site->with_waiters, 1u);
  EXPECT_EQ(broadcast.site->without_waiters, 0u);
  const LockSummary& condition = *broadcast.lock;
  const SiteSummary* waits = site_of(condition, "crowd-wait", Operation::kCondWait);
  ASSERT_NE(waits, nullptr);
  EXPECT_EQ(waits->count, 3u);
  EXPECT_EQ(waits->failed, 0u);
  EXPECT_EQ(condition.acquisitions, 3u);
  EXPECT_EQ(condition.events, 1u);

  const FoundSite reacquire = find_site(process(), "crowd-wait", Operation::kCondReacquire);
  ASSERT_NE(reacquire.site, nullptr);
  EXPECT_EQ(reacquire.site->count, 3u);
  EXPECT_EQ(reacquire.lock->reacquisitions, 3u);
  const SiteSummary* crowd_lock = site_of(*reacquire.lock, "crowd-lock", Operation::kLock);
  const SiteSummary* broadcaster = site_of(*reacquire.lock, "broadcaster-lock", Operation::kLock);
  ASSERT_NE(crowd_lock, nullptr);
  ASSERT_NE(broadcaster, nullptr);
  EXPECT_EQ(crowd_lock->count, 3u);
  EXPECT_EQ(reacquire.lock->acquisitions, 4u);
}

}  // namespace
}  // namespace lockscope::testing

namespace lockscope::testing {
namespace {

TEST(CondVarWakeups, SignalsFromAThreadHoldingNothingAreWakeUpLatencyNotContention) {
  constexpr int kRounds = 200;
  TemporaryDirectory dir;
  const ProcessProfile process =
      record_unchanged(dir, "condvar_wakeups", {std::to_string(kRounds)});
  const FoundSite wait = lockscope::testing::find_site(process, "condvar_wakeups", "waiter-wait",
                                                       format::Operation::kCondTimedWait);
  ASSERT_NE(wait.site, nullptr);
  EXPECT_EQ(wait.site->count, static_cast<uint64_t>(kRounds));
  const SiteSummary* wake = lockscope::testing::site_of(
      *wait.lock, "condvar_wakeups", "waiter-wait", format::Operation::kCondWake);
  ASSERT_NE(wake, nullptr) << "no wake-up latency recorded on the condvar";
  EXPECT_EQ(wake->count, static_cast<uint64_t>(kRounds)) << "one signalled wake per round";
  EXPECT_EQ(wait.lock->wakeups, static_cast<uint64_t>(kRounds));
  EXPECT_EQ(wait.lock->acquisitions, static_cast<uint64_t>(kRounds)) << "wakes are not waits";
  const FoundSite reacquire = lockscope::testing::find_site(
      process, "condvar_wakeups", "waiter-wait", format::Operation::kCondReacquire);
  ASSERT_NE(reacquire.site, nullptr);
  EXPECT_EQ(reacquire.site->count, static_cast<uint64_t>(kRounds));
  EXPECT_EQ(reacquire.site->contended, 0u) << "nobody else ever held the waiter's mutex";
  EXPECT_EQ(reacquire.site->wait_sum_ns, 0u);
}

TEST(CondVarWakeups, ATimedOutWaitIsAllConditionWaitEvenAfterSomeoneElsesSignal) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "condvar_wakeups", {"1"});
  const FoundSite wait = lockscope::testing::find_site(process, "condvar_wakeups", "timed-out-wait",
                                                       format::Operation::kCondTimedWait);
  ASSERT_NE(wait.site, nullptr);
  EXPECT_GE(wait.site->failed, 1u) << "the ETIMEDOUT return";
  EXPECT_GE(wait.site->wait_sum_ns, 35 * kMs) << "the 40 ms of waiting for the condition";
  const FoundSite reacquire = lockscope::testing::find_site(
      process, "condvar_wakeups", "timed-out-wait", format::Operation::kCondReacquire);
  ASSERT_NE(reacquire.site, nullptr);
  EXPECT_LT(reacquire.site->wait_sum_ns, 5 * kMs)
      << "the tail after another waiter's signal is not mutex re-acquire";
}

}  // namespace
}  // namespace lockscope::testing

namespace lockscope::testing {
namespace {

// A mutex's re-takes inside condition waits are not calls of the program (not in its
// acquisitions), but their waits are in its wait histogram and total: the report says how many,
// so that its figures add up (a mutex with 1 acquisition showed 200 re-acquisitions' wait,
// unexplained).
TEST(CondVarWakeups, AMutexRowSaysWhichOfItsWaitsWereReacquisitions) {
  constexpr int kRounds = 200;
  TemporaryDirectory dir;
  const ProcessProfile process =
      record_unchanged(dir, "condvar_wakeups", {std::to_string(kRounds)});
  const FoundSite reacquire = lockscope::testing::find_site(
      process, "condvar_wakeups", "waiter-wait", format::Operation::kCondReacquire);
  ASSERT_NE(reacquire.site, nullptr);
  const LockSummary& mutex = *reacquire.lock;
  EXPECT_EQ(mutex.reacquisitions, static_cast<uint64_t>(kRounds));
  uint64_t reacquires_that_waited = 0;
  for (const SiteSummary& site : mutex.sites)
    if (site.operation == format::Operation::kCondReacquire)
      reacquires_that_waited += site.contended;
  EXPECT_EQ(mutex.wait.total(), mutex.acquisitions + mutex.failed + reacquires_that_waited)
      << "the histogram holds the calls and the re-acquisitions that waited, nothing else";
  const CommandResult report = run_lockscope({"report", "--all", dir.path()});
  ASSERT_EQ(report.exit_status, 0) << report.err;
  EXPECT_NE(
      report.out.find("in " + std::to_string(kRounds) + " re-acquisitions inside condition waits)"),
      std::string::npos)
      << report.out;
}

// A broadcast wakes the one waiter; the signaller keeps the mutex 50 ms, then broadcasts 999 times
// more and lets go. A woken thread stays in its call until it has the mutex again, and the runtime
// counted each later broadcast as one that woke it ("woke 1,000" for 1 wait; pigz: 547 for 338
// waits), and took the latest as its wake-up: the 50 ms it waited for the mutex were counted as
// condition wait. Now 1 broadcast woke it, 999 nobody, and the re-acquire waited from the first
// broadcast to the signaller's release (the fixture's own clock readings bound it).
TEST(CondVarWakeups, OnlyTheSignalThatWokeAWaiterCountsAsWakingItAndEndsItsWait) {
  TemporaryDirectory dir;
  CommandResult recorded;
  const ProcessProfile process =
      record_program_unchanged(dir, {fixture("signals_after_wake")}, nullptr, &recorded);
  long long first = 0, released = 0;
  const size_t at = recorded.err.find("first broadcast ");
  ASSERT_NE(at, std::string::npos) << recorded.err;
  std::sscanf(recorded.err.c_str() + at, "first broadcast %lld released %lld", &first, &released);
  const FoundSite one = lockscope::testing::find_site(process, "signals_after_wake",
                                                      "first-broadcast", Operation::kCondBroadcast);
  const FoundSite more = lockscope::testing::find_site(
      process, "signals_after_wake", "more-broadcasts", Operation::kCondBroadcast);
  ASSERT_NE(one.site, nullptr);
  ASSERT_NE(more.site, nullptr);
  EXPECT_EQ(one.site->with_waiters, 1u);
  EXPECT_EQ(more.site->count, 999u);
  EXPECT_EQ(more.site->with_waiters, 0u) << "the waiter was woken already";
  EXPECT_EQ(more.site->without_waiters, 999u);
  const FoundSite reacquire = lockscope::testing::find_site(process, "signals_after_wake", "wait",
                                                            Operation::kCondReacquire);
  ASSERT_NE(reacquire.site, nullptr);
  EXPECT_EQ(reacquire.site->contended, 1u);
  EXPECT_GE(reacquire.site->wait_sum_ns, 50 * kMs) << "waited for the mutex the signaller kept";
  EXPECT_LE(reacquire.site->wait_sum_ns, static_cast<uint64_t>(released - first) + kMs);
}

}  // namespace
}  // namespace lockscope::testing
