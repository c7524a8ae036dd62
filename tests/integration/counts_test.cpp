// Exact counts, call-site lines and measured waits from fixtures run under the real runtime.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

using format::Operation;

// `err` (when given) gets lockscope's stderr, where the fixture's own counts are too.
ProcessProfile record_single_process(const TemporaryDirectory& dir, const std::string& name,
                                     const std::vector<std::string>& args,
                                     const std::vector<std::string>& options = {},
                                     std::string* err = nullptr) {
  std::vector<std::string> command = {"record", "-o", dir.path()};
  command.insert(command.end(), options.begin(), options.end());
  command.push_back("--");
  command.push_back(fixture(name));
  command.insert(command.end(), args.begin(), args.end());
  const CommandResult result = run_lockscope(command);
  EXPECT_EQ(result.exit_status, 0) << result.err;
  if (err) *err = result.err;
  Profile profile = load_profile(dir.path());
  EXPECT_TRUE(profile.problems.empty());
  if (profile.processes.size() != 1) {
    ADD_FAILURE() << "expected one process, got " << profile.processes.size();
    return {};
  }
  return profile.processes[0];
}

TEST(Counts, ThreadsTimesIterationsAcquisitionsAtTheFixturesOwnLines) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_single_process(dir, "counter_threads", {"4", "2500"});
  const int lock_line = marker_line("counter_threads", "counter-lock");
  const int unlock_line = marker_line("counter_threads", "counter-unlock");
  const LockSummary* lock = lock_acquired_at(process, "counter_threads.c", lock_line);
  ASSERT_NE(lock, nullptr);
  EXPECT_EQ(lock->acquisitions, 4u * 2500u);
  EXPECT_EQ(lock->releases, 4u * 2500u);
  EXPECT_EQ(lock->failed, 0u);
  const SiteSummary* acquire = site_at(*lock, "counter_threads.c", lock_line, Operation::kLock);
  const SiteSummary* release = site_at(*lock, "counter_threads.c", unlock_line, Operation::kUnlock);
  ASSERT_NE(acquire, nullptr);
  ASSERT_NE(release, nullptr);
  EXPECT_EQ(acquire->count, 10000u);
  EXPECT_EQ(release->count, 10000u);
  EXPECT_EQ(acquire->location.function, "count_up");
  EXPECT_LE(lock->contended, lock->acquisitions);
  EXPECT_EQ(lock->wait.total(), lock->acquisitions);  // every acquisition in exactly one bucket
  // Per thread: four workers with 2500 each, plus the main thread with none.
  int workers = 0;
  for (const ThreadSummary& thread : process.threads) {
    if (thread.flags & format::kThreadMain) {
      EXPECT_EQ(thread.acquisitions, 0u);
      continue;
    }
    ++workers;
    EXPECT_EQ(thread.acquisitions, 2500u);
    EXPECT_EQ(thread.releases, 2500u);
    EXPECT_NE(thread.tid, process.pid);
  }
  EXPECT_EQ(workers, 4);
  EXPECT_EQ(process.counter(format::Counter::kUnbalancedUnlocks), 0u);
  EXPECT_EQ(process.counter(format::Counter::kDroppedSites), 0u);
}

// Out-of-order releases (`outer` let go of before `inner`, taken under it, as memcached lets go of
// an LRU lock before an item lock; at two lines in turn): every release counted at its own line,
// none unbalanced, each thread's releases its acquisitions; with --hold-sample 1 every hold of
// `outer` timed, their sum at least the fixture's own measure of its 1 ms holds (which make the
// other threads wait).
TEST(Counts, OutOfOrderReleasesAreCountedAtTheirLinesAndTheirHoldsTimed) {
  for (const char* sample : {"1", "32"}) {
    SCOPED_TRACE(std::string("--hold-sample ") + sample);
    TemporaryDirectory dir;
    std::string err;
    const ProcessProfile process =
        record_single_process(dir, "unlock_order", {"3", "2000"}, {"--hold-sample", sample}, &err);
    long long slept_ns = -1;
    const size_t at = err.find("slept_ns ");
    ASSERT_NE(at, std::string::npos) << err;
    slept_ns = std::atoll(err.c_str() + at + 9);
    ASSERT_GE(slept_ns, 3 * 40 * 1'000'000ll) << "3 threads x 40 holds of 1 ms";
    for (const char* name : {"outer", "inner"}) {
      const int lock_line = marker_line("unlock_order", std::string(name) + "-lock");
      const int unlock_line = marker_line("unlock_order", std::string(name) + "-unlock");
      const LockSummary* lock = lock_acquired_at(process, "unlock_order.c", lock_line);
      ASSERT_NE(lock, nullptr) << name;
      EXPECT_EQ(lock->acquisitions, 6000u) << name;
      EXPECT_EQ(lock->releases, 6000u) << name;
      const SiteSummary* acquire = site_at(*lock, "unlock_order.c", lock_line, Operation::kLock);
      const SiteSummary* release =
          site_at(*lock, "unlock_order.c", unlock_line, Operation::kUnlock);
      ASSERT_NE(acquire, nullptr) << name;
      ASSERT_NE(release, nullptr) << name;
      EXPECT_EQ(acquire->count, 6000u) << name;
      const bool outer = std::string(name) == "outer";
      EXPECT_EQ(release->count, outer ? 3000u : 6000u) << name;
      if (outer) {  // the odd rounds' releases, at a line of their own
        const SiteSummary* odd =
            site_at(*lock, "unlock_order.c", marker_line("unlock_order", "outer-unlock-odd"),
                    Operation::kUnlock);
        ASSERT_NE(odd, nullptr);
        EXPECT_EQ(odd->count, 3000u);
      }
      EXPECT_EQ(lock->sites.size(), outer ? 3u : 2u) << name << ": no release counted elsewhere";
      if (std::string(sample) == "1" && outer) {
        EXPECT_EQ(acquire->hold_samples, 6000u);
        EXPECT_GE(acquire->hold_sum_ns, static_cast<uint64_t>(slept_ns));
      }
    }
    EXPECT_EQ(process.counter(format::Counter::kUnbalancedUnlocks), 0u);
    for (const ThreadSummary& thread : process.threads)
      EXPECT_EQ(thread.acquisitions, thread.releases) << thread.tid;
  }
}

TEST(Counts, SleepingHolderPutsEveryWaitAboveOneMillisecond) {
  TemporaryDirectory dir;
  const int rounds = 5;
  const ProcessProfile process =
      record_single_process(dir, "sleepy_holder", {std::to_string(rounds)}, {"--hold-sample", "1"});
  const int waiter_line = marker_line("sleepy_holder", "waiter-lock");
  const int holder_line = marker_line("sleepy_holder", "holder-lock");
  const LockSummary* lock = lock_acquired_at(process, "sleepy_holder.c", waiter_line);
  ASSERT_NE(lock, nullptr);
  const SiteSummary* waiter = site_at(*lock, "sleepy_holder.c", waiter_line, Operation::kLock);
  const SiteSummary* holder = site_at(*lock, "sleepy_holder.c", holder_line, Operation::kLock);
  ASSERT_NE(waiter, nullptr);
  ASSERT_NE(holder, nullptr);
  EXPECT_EQ(waiter->count, unsigned(rounds));
  EXPECT_EQ(waiter->contended, unsigned(rounds));
  const auto buckets = report_buckets(waiter->wait);
  EXPECT_EQ(buckets[4], unsigned(rounds)) << "waits must land in the > 1000 us bucket";
  // Each wait is at most the 2 ms sleep plus scheduling; at least 1 ms.
  EXPECT_GE(waiter->wait_sum_ns, rounds * 1'000'000ull);
  EXPECT_LE(waiter->wait_sum_ns, rounds * 2'000'000ull + 400'000'000ull);
  // The holder's holds (every one timed with --hold-sample 1) include the 2 ms sleeps.
  EXPECT_EQ(holder->hold_samples, unsigned(rounds));
  EXPECT_GE(holder->hold_sum_ns, rounds * 2'000'000ull);
  EXPECT_EQ(process.hold_sample_period, 1u);
  EXPECT_GE(lock->owner_changes, unsigned(rounds));
}

TEST(Counts, TwoThousandShortLivedThreadsAreAllCounted) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_single_process(dir, "many_threads", {"2000"});
  const LockSummary* lock =
      lock_acquired_at(process, "many_threads.c", marker_line("many_threads", "many-lock"));
  ASSERT_NE(lock, nullptr);
  EXPECT_EQ(lock->acquisitions, 2000u);
  EXPECT_EQ(lock->releases, 2000u);
  EXPECT_EQ(process.threads.size(), 2001u);
  EXPECT_EQ(process.counter(format::Counter::kDroppedThreads), 0u);
}

TEST(Counts, LocksTakenBeforeOurConstructorAreRecorded) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_single_process(dir, "early_lock", {});
  const LockSummary* lock =
      lock_acquired_at(process, "early_lock.c", marker_line("early_lock", "early-lock"));
  ASSERT_NE(lock, nullptr);
  const SiteSummary* early =
      site_at(*lock, "early_lock.c", marker_line("early_lock", "early-lock"), Operation::kLock);
  ASSERT_NE(early, nullptr);
  EXPECT_EQ(early->count, 3u);
  EXPECT_EQ(lock->acquisitions, 4u);
  bool named = false;
  for (const ThreadSummary& thread : process.threads) named |= thread.name == "named-worker";
  EXPECT_TRUE(named) << "pthread_setname_np's name must reach the report";
}

TEST(Counts, HoldSamplingScalesToTheExactCount) {
  TemporaryDirectory dir;
  const ProcessProfile process =
      record_single_process(dir, "counter_threads", {"1", "8000"}, {"--hold-sample", "8"});
  const LockSummary* lock = lock_acquired_at(process, "counter_threads.c",
                                             marker_line("counter_threads", "counter-lock"));
  ASSERT_NE(lock, nullptr);
  EXPECT_EQ(process.hold_sample_period, 8u);
  // One thread, no contention: the first 8 holds are all timed (a cold site is exact), then one
  // in 8 on average (gaps of 1 to 15 at random), each standing for itself and the acquisitions
  // after it until the next: 8 + ~999 timed holds (±17) whose weights add up to exactly the 8000
  // acquisitions.
  EXPECT_EQ(lock->sites.size(), 2u);
  for (const SiteSummary& site : lock->sites)
    if (site.operation == Operation::kLock) {
      EXPECT_GE(site.hold_samples, 8u + 900u);
      EXPECT_LE(site.hold_samples, 8u + 1100u);
      EXPECT_EQ(site.hold.total(), 8000u);
    }
}

TEST(Counts, AColdSiteHasEveryHoldTimedAtTheDefaultSampling) {
  // 20 holds of 2 ms at the default 1-in-32 sampling: fewer acquisitions than the period, so every
  // one is timed, and the total is the sum of 20 holds, not one hold (which the old estimator
  // reported: 20 holds of 3 ms as 3.1 ms).
  TemporaryDirectory dir;
  const int rounds = 20;
  const ProcessProfile process =
      record_single_process(dir, "sleepy_holder", {std::to_string(rounds)});
  EXPECT_EQ(process.hold_sample_period, 32u);
  const int holder_line = marker_line("sleepy_holder", "holder-lock");
  const LockSummary* lock = lock_acquired_at(process, "sleepy_holder.c", holder_line);
  ASSERT_NE(lock, nullptr);
  const SiteSummary* holder = site_at(*lock, "sleepy_holder.c", holder_line, Operation::kLock);
  ASSERT_NE(holder, nullptr);
  EXPECT_EQ(holder->hold_samples, unsigned(rounds));
  EXPECT_EQ(holder->hold.total(), unsigned(rounds));
  EXPECT_GE(holder->hold_sum_ns, rounds * 2'000'000ull);
  EXPECT_LE(lock->hold_sum_ns, process.duration_ns)
      << "an exclusive lock is held at most for the run";
}

}  // namespace
}  // namespace lockscope::testing

namespace lockscope::testing {
namespace {

TEST(Counts, ConditionWaitIsNotCountedAsHoldTime) {
  TemporaryDirectory dir;
  const CommandResult result = run_lockscope(
      {"record", "-o", dir.path(), "--hold-sample", "1", "--", fixture("condvar_hold")});
  ASSERT_EQ(result.exit_status, 0) << result.err;
  Profile profile = load_profile(dir.path());
  ASSERT_EQ(profile.processes.size(), 1u);
  const int line = marker_line("condvar_hold", "consumer-lock");
  const LockSummary* lock = lock_acquired_at(profile.processes[0], "condvar_hold.c", line);
  ASSERT_NE(lock, nullptr);
  const SiteSummary* consumer = site_at(*lock, "condvar_hold.c", line, format::Operation::kLock);
  ASSERT_NE(consumer, nullptr);
  EXPECT_EQ(consumer->hold_samples, 1u);
  EXPECT_LT(consumer->hold_max_ns, 15'000'000u) << "the 20 ms condition wait leaked into the hold";
}

}  // namespace
}  // namespace lockscope::testing

namespace lockscope::testing {
namespace {

// HANDOFFS against the program's own count, made inside every critical section (re-acquisitions
// inside pthread_cond_wait included): exact, not an estimate.
// The line of the fixture's own counts in `err`, from its first word on ("" when missing).
std::string own_counts(const std::string& err, const std::string& first_word) {
  const size_t at = err.find(first_word);
  return at == std::string::npos ? std::string() : err.substr(at, err.find('\n', at) - at);
}

// `args`: the fixture's. A plain mutex keeps its owner in itself, a recursive one in its slot
// (src/runtime/lock_owner.h): both exact.
void expect_exact_handoffs(const std::vector<std::string>& args) {
  TemporaryDirectory dir;
  std::string err;
  const ProcessProfile process = record_single_process(dir, "handoffs", args, {}, &err);
  long pong = -1, busy = -1;
  ASSERT_EQ(std::sscanf(own_counts(err, "pong_changes").c_str(),
                        "pong_changes %ld busy_changes %ld", &pong, &busy),
            2)
      << err;
  const FoundSite pong_lock = find_site(process, "handoffs", "pong-lock", Operation::kLock);
  const FoundSite busy_lock = find_site(process, "handoffs", "busy-lock", Operation::kLock);
  ASSERT_NE(pong_lock.lock, nullptr);
  ASSERT_NE(busy_lock.lock, nullptr);
  EXPECT_GT(pong, 2000) << "the ping-pong hands the mutex over inside every wait";
  EXPECT_EQ(pong_lock.lock->owner_changes, static_cast<uint64_t>(pong));
  EXPECT_EQ(busy_lock.lock->owner_changes, static_cast<uint64_t>(busy));
}

TEST(Handoffs, OwnerChangesEqualWhatTheProgramCountedInsideItsCriticalSections) {
  expect_exact_handoffs({"2000"});
}

TEST(Handoffs, ARecursiveMutexsOwnerChangesAreExactToo) {
  expect_exact_handoffs({"2000", "recursive"});
}

// A forked child's copy of a mutex the parent's threads owned names no owner in the child (the
// owner word the parent left there is of another fork generation): the child's HANDOFFS count
// from there, as the child counted them itself, and the parent's stay its own.
TEST(Handoffs, AForkedChildCountsItsOwnFromNoOwner) {
  TemporaryDirectory dir;
  const CommandResult result =
      run_lockscope({"record", "-o", dir.path(), "--", fixture("handoffs"), "500", "fork"});
  ASSERT_EQ(result.exit_status, 0) << result.err;
  long pong = -1, busy = -1, child = -1;
  ASSERT_EQ(std::sscanf(own_counts(result.err, "pong_changes").c_str(),
                        "pong_changes %ld busy_changes %ld", &pong, &busy),
            2)
      << result.err;
  ASSERT_EQ(
      std::sscanf(own_counts(result.err, "child_changes").c_str(), "child_changes %ld", &child), 1)
      << result.err;
  Profile profile = load_profile(dir.path());
  ASSERT_EQ(profile.processes.size(), 2u);
  const FoundSite parent_lock =
      find_site(profile.processes[0], "handoffs", "busy-lock", Operation::kLock);
  const FoundSite child_lock =
      find_site(profile.processes[1], "handoffs", "busy-lock", Operation::kLock);
  ASSERT_NE(parent_lock.lock, nullptr);
  ASSERT_NE(child_lock.lock, nullptr);
  EXPECT_EQ(parent_lock.lock->acquisitions, 4u * 5000u);
  EXPECT_EQ(child_lock.lock->acquisitions, 4u * 5000u);
  EXPECT_EQ(parent_lock.lock->owner_changes, static_cast<uint64_t>(busy));
  EXPECT_EQ(child_lock.lock->owner_changes, static_cast<uint64_t>(child));
}

}  // namespace
}  // namespace lockscope::testing

namespace lockscope::testing {
namespace {

// The site's hold estimate against the truth the timed_holds fixture printed (`err`): within twice
// its stated bound plus `slack` of the truth, above what the holds came to without preemption and
// below what they came to with it.
void expect_hold_estimate_within_its_bound(const SiteSummary& site, const std::string& err,
                                           double slack) {
  long long truth = 0, clipped = 0;
  ASSERT_EQ(std::sscanf(own_counts(err, "total_hold_ns").c_str(),
                        "total_hold_ns %lld clipped_hold_ns %lld", &truth, &clipped),
            2)
      << err;
  const double estimate = double(site.hold_sum_ns), bound = double(site.hold_error_ns);
  const double margin = 2 * bound + slack * double(truth);
  EXPECT_GE(estimate, double(clipped) - margin)
      << "estimate " << estimate << " ± " << bound << ", truth without preemption " << clipped;
  EXPECT_LE(estimate, double(truth) + margin)
      << "estimate " << estimate << " ± " << bound << ", truth " << truth;
}

// The sampled hold estimate against the program's own measurement. The bound is a 95 % one from
// the samples' variance, so: twice the bound (~4 sigma), plus 1 % for the few ns per hold between
// the lock's return and the program's clock read. And it cannot see outliers no sample caught: on
// a loaded machine a few holds are preempted for milliseconds, and the 1-in-8 samples may miss
// them all. So the estimate must lie between the total without preemption (each hold clipped to
// its intended length) and the total with it, each widened by that margin.
TEST(Counts, TheSampledHoldEstimateIsWithinItsStatedBoundOfTheTruth) {
  TemporaryDirectory dir;
  std::string err;
  const ProcessProfile process =
      record_single_process(dir, "timed_holds", {"3000"}, {"--hold-sample", "8"}, &err);
  const FoundSite site = find_site(process, "timed_holds", "timed-lock", Operation::kLock);
  ASSERT_NE(site.site, nullptr);
  // 8 exact, then 1 in 8 on average: ~374 (±10).
  EXPECT_GE(site.site->hold_samples, 8u + 314u);
  EXPECT_LE(site.site->hold_samples, 8u + 434u);
  EXPECT_GT(site.site->hold_error_ns, 0u) << "a sampled estimate states its error";
  expect_hold_estimate_within_its_bound(*site.site, err, 0.01);
  // One site: the lock's bound is the site's (both capped at the estimate, which a preempted
  // sample among the 374 can make the bound exceed on a loaded machine).
  EXPECT_EQ(site.lock->hold_error_ns, site.site->hold_error_ns);
}

// The holds of one mutex add up to no more than the time it existed to be held, and to no less
// than the program's own spans under it (from its lock's return to its unlock's call): 4 threads
// on one mutex, every hold timed, in summary and in trace mode (whose events lengthen each
// critical section, so more of the releases wake a waiter). A hold whose unlock wakes a sleeping
// waiter ends just before that unlock: timed to after it, past the futex call, it overlapped the
// next holder's hold (trace mode: 360 ms of holds in the 311 ms the threads ran).
TEST(Counts, TheHoldsOfAContendedMutexFitInTheTimeItCouldBeHeld) {
  const int lock_line = marker_line("counter_threads", "counter-lock");
  for (const bool traced : {false, true}) {
    TemporaryDirectory dir;
    std::string err;
    std::vector<std::string> options = {"--hold-sample", "1"};
    if (traced) options.push_back("--trace");
    const ProcessProfile process =
        record_single_process(dir, "counter_threads", {"4", "200000", "timed"}, options, &err);
    long long window = 0, inner = 0;
    ASSERT_EQ(std::sscanf(own_counts(err, "window_ns").c_str(), "window_ns %lld", &window), 1)
        << err;
    ASSERT_EQ(std::sscanf(own_counts(err, "inner_hold_ns").c_str(), "inner_hold_ns %lld", &inner),
              1)
        << err;
    const LockSummary* lock = lock_acquired_at(process, "counter_threads.c", lock_line);
    ASSERT_NE(lock, nullptr);
    EXPECT_EQ(lock->acquisitions, 800000u);
    EXPECT_EQ(lock->hold_error_ns, 0u) << "every hold timed";
    EXPECT_LE(lock->hold_sum_ns, uint64_t(window))
        << (traced ? "traced: " : "") << lock->contended << " contended acquisitions";
    EXPECT_GE(lock->hold_sum_ns, uint64_t(inner))
        << (traced ? "traced: " : "") << "the program's own spans under the mutex";
  }
}

// Holds that repeat with the sampling's own period (a 40 us hold every 32nd time, 32,000 holds):
// sampled every 32nd acquisition, every sample fell on a short hold and the estimate read 0.2 ms
// of ~40 ms with a bound of a few percent. Samples at random gaps see the long holds as often as
// they come.
TEST(Counts, HoldsRepeatingWithTheSamplingsPeriodAreEstimatedWithinTheBound) {
  TemporaryDirectory dir;
  std::string err;
  const ProcessProfile process =
      record_single_process(dir, "timed_holds", {"32000", "32000", "periodic"}, {}, &err);
  const FoundSite site = find_site(process, "timed_holds", "timed-lock", Operation::kLock);
  ASSERT_NE(site.site, nullptr);
  EXPECT_EQ(site.site->count, 32000u);
  EXPECT_LT(site.site->hold_samples, 32000u / 8) << "sampled, 1 in 32 on average";
  expect_hold_estimate_within_its_bound(*site.site, err, 0.05);
}

// A sample stands for itself and the acquisitions after it until the next: the holds that have
// not come yet when the profile is written are not in the histogram. 3,003 holds 1 in 8: 8 exact
// and 375 samples, the last of which (the 3,001st) stands for 3 holds, not 8; the histogram
// showed 3,008 holds of 3,003 acquisitions (a site of 100 showed 128 at 1 in 32).
TEST(Counts, TheHoldHistogramHoldsEachAcquisitionOnce) {
  TemporaryDirectory dir;
  std::string err;
  const ProcessProfile process =
      record_single_process(dir, "timed_holds", {"3003"}, {"--hold-sample", "8"}, &err);
  const FoundSite site = find_site(process, "timed_holds", "timed-lock", Operation::kLock);
  ASSERT_NE(site.site, nullptr);
  EXPECT_EQ(site.site->count, 3003u);
  EXPECT_GE(site.site->hold_samples, 8u + 315u);  // 8 exact, then ~375 (±10) samples
  EXPECT_LE(site.site->hold_samples, 8u + 435u);
  EXPECT_EQ(site.site->hold.total(), 3003u);
  EXPECT_EQ(site.lock->hold.total(), 3003u);
}

// The same for hold time by release stack: a sample's row stands for the acquisitions after it
// that came. 20 holds 1 in 8, the last 4 let go of at another line: 8 exact at the first line,
// then samples at random gaps (1 to 15), each standing for the holds until the next that came,
// in the row of the line it was let go of at: the rows add up to the 20 holds (the rows once held
// 16 and 8 for a last sample standing for the 17th to 24th, which the reader scaled down to the
// site's 20 evenly: 13 and 6). Each timed hold's stack is captured (the captures fit the budget).
TEST(Counts, HoldStacksHoldEachAcquisitionOnceAtTheStackItWasReleasedFrom) {
  TemporaryDirectory dir;
  const ProcessProfile process =
      record_unchanged(dir, "timed_holds", {"20", "16"}, {"--hold-sample", "8"});
  const FoundSite site = find_site(process, "timed_holds", "timed-lock", Operation::kLock);
  ASSERT_NE(site.site, nullptr);
  EXPECT_EQ(site.site->count, 20u);
  EXPECT_EQ(site.site->hold.total(), 20u);
  uint64_t early = 0, late = 0, early_ns = 0, late_ns = 0;
  for (const HoldStack& row : site.site->hold_stacks) {
    ASSERT_LT(row.stack, process.stacks.size());
    ASSERT_FALSE(process.stacks[row.stack].empty());
    const CodeLocation& innermost = process.stacks[row.stack][0];
    if (located_at(innermost, "timed_holds.c", marker_line("timed_holds", "timed-unlock"))) {
      early += row.holds;
      early_ns += row.hold_ns;
    } else if (located_at(innermost, "timed_holds.c",
                          marker_line("timed_holds", "timed-unlock-late"))) {
      late += row.holds;
      late_ns += row.hold_ns;
    } else {
      ADD_FAILURE() << "a hold released from " << innermost.label;
    }
  }
  // (A capture a busy machine preempted may spend the budget: then fewer, never more.)
  EXPECT_LE(early + late, 20u) << "each hold once";
  EXPECT_GE(early, 9u) << "8 exact and the first sample's";
  EXPECT_LE(late, 4u) << "no more than the 4 holds let go of there";
  EXPECT_LE(early_ns + late_ns, site.site->hold_sum_ns + site.site->hold_error_ns);
  EXPECT_GT(early_ns, 9u * 10'000u) << "holds of 10 us or more";
}

// A thread gone while it held a hold of its site: that hold never counted (it has no end). 9
// acquisitions 1 in 4 on average: 4 exact, the 5th a sample standing for itself and 0 to 6 after
// it, the 9th still held when the thread ended: either a sample itself (its pending countdown was
// its own, not the previous sample's: the fold once took it from the 5th's bucket, leaving 5), or
// one of those the latest sample stood for, which then leaves that sample's bucket. Its numbers
// are folded into the process's when another thread takes its slot: the histogram holds the 8
// holds that ended.
TEST(Counts, AThreadGoneHoldingASampleLeavesTheHistogramItsEndedHolds) {
  TemporaryDirectory dir;
  const ProcessProfile process =
      record_unchanged(dir, "exit_holding_sample", {"4"}, {"--hold-sample", "4"});
  const FoundSite site =
      find_site(process, "exit_holding_sample", "sampled-lock", Operation::kLock);
  ASSERT_NE(site.site, nullptr);
  EXPECT_EQ(site.site->count, 9u);
  EXPECT_EQ(site.site->hold.total(), 8u);
  // Hold time by release stack likewise (a few captures, well within the budget).
  uint64_t holds = 0;
  for (const HoldStack& row : site.site->hold_stacks) holds += row.holds;
  EXPECT_EQ(holds, 8u);
}

}  // namespace
}  // namespace lockscope::testing

namespace lockscope::testing {
namespace {

// A hold that makes another thread wait is timed exactly, whatever the sampling: the four 20 ms
// holds the waiter was blocked on fall between samples (see the fixture), and before they were
// timed the site showed a few microseconds as its longest hold and an estimate from short holds.
void expect_long_holds_timed_exactly(const std::string& mode) {
  TemporaryDirectory dir;
  std::string err;
  std::vector<std::string> args = {"4", "100"};
  if (!mode.empty()) args.push_back(mode);
  const ProcessProfile process =
      record_single_process(dir, "blocking_holds", args, {"--hold-sample", "64"}, &err);
  long long truth = 0, long_total = 0, longest = 0, outer_truth = 0, longest_outer = 0;
  ASSERT_EQ(std::sscanf(own_counts(err, "hold_ns").c_str(),
                        "hold_ns %lld long_hold_ns %lld longest_hold_ns %lld outer_hold_ns %lld "
                        "longest_outer_hold_ns %lld",
                        &truth, &long_total, &longest, &outer_truth, &longest_outer),
            5)
      << err;
  // The runtime's clock and the program's are calibrated against each other: a few µs apart over
  // a run.
  constexpr double kClocks = 100'000.0;
  const FoundSite site = find_site(process, "blocking_holds", "hold-lock", Operation::kLock);
  ASSERT_NE(site.site, nullptr);
  EXPECT_EQ(site.site->count, 4u * 101u);
  // The runtime's hold lies between the program's clock reads inside the hold and those around
  // its lock and unlock calls (a preemption in between, on a loaded machine, counts as held).
  EXPECT_GE(site.site->hold_max_ns, static_cast<uint64_t>(longest)) << "the longest is timed";
  EXPECT_LE(double(site.site->hold_max_ns), double(longest_outer) + kClocks)
      << "longest inside " << longest << ", around " << longest_outer;
  // The long holds are exact; the 400 short ones (a few us each) are estimated around them.
  const double estimate = double(site.site->hold_sum_ns), bound = double(site.site->hold_error_ns);
  EXPECT_GE(estimate, double(long_total))
      << "estimate " << estimate << ", long holds " << long_total;
  EXPECT_LE(estimate, double(outer_truth) + 2 * bound + kClocks)
      << "estimate " << estimate << " ± " << bound << ", truth " << truth << ", around "
      << outer_truth;
  // One lock, first waited for in the prime round: the one hold that may have gone untimed.
  EXPECT_EQ(process.counter(format::Counter::kBlockingHoldsUntimed), 1u);
}

TEST(Counts, HoldsThatMadeAThreadWaitAreTimedExactly) {
  expect_long_holds_timed_exactly("");
}

// The same when the waiter was woken by a signal sent while the mutex was held: it then waits to
// re-take the mutex inside glibc's condition wait, where no interposed lock call sees it.
TEST(Counts, AHoldThatSignalsAWaitingCondvarIsTimedExactly) {
  expect_long_holds_timed_exactly("condvar");
}

}  // namespace
}  // namespace lockscope::testing
