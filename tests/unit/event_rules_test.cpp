// The event rules over hand-made profiles: what the fixtures cannot show on every machine (a
// runtime that records threads' scheduling policies, for priority-inversion) and the cases where a
// rule must stay silent because the profile cannot support its claim.
#include <gtest/gtest.h>

#include "analysis/diagnosis/rule_table.h"
#include "analysis/profile_views.h"

namespace lockscope {
namespace {

constexpr int32_t kOther = 0, kFifo = 1, kRr = 2;
constexpr size_t kMutexSlot = size_t(format::Primitive::kMutex);

ThreadSummary thread(uint32_t tid, int32_t policy, int32_t priority, uint64_t mutex_wait_ns) {
  ThreadSummary summary;
  summary.tid = tid;
  summary.sched_known = true;
  summary.sched_policy = policy;
  summary.sched_priority = priority;
  summary.wait_ns_by_primitive[kMutexSlot] = mutex_wait_ns;
  summary.wait_sum_ns = mutex_wait_ns;
  return summary;
}

LockSummary mutex(const std::string& name, uint64_t wait_ns, uint32_t flags = 0) {
  LockSummary lock;
  lock.address = 0x1000;
  lock.name = name;
  lock.name_source = LockNameSource::kSymbol;
  lock.flags = flags;
  SiteSummary site;
  site.location.module = 0;
  site.location.offset = 0x40;
  site.location.label = "control rt.c:12";
  site.count = 10;
  site.contended = wait_ns ? 1 : 0;
  site.wait_sum_ns = wait_ns;
  site.wait_max_ns = wait_ns;
  lock.sites = {site};
  lock.finish();
  return lock;
}

// A SCHED_FIFO 10 thread that waited 5 ms for sensor_mutex, a SCHED_OTHER thread beside it.
Profile inversion_profile() {
  Profile profile;
  ProcessProfile process;
  process.pid = 9;
  process.duration_ns = 100'000'000;
  process.threads = {thread(1, kOther, 0, 0), thread(2, kFifo, 10, 5'000'000)};
  process.locks = {mutex("sensor_mutex", 5'000'000)};
  profile.processes = {process};
  return profile;
}

std::vector<Finding> findings_of(const Profile& profile, const std::string& rule) {
  const ProfileViews views(profile);
  std::vector<Finding> found;
  for (const Finding& finding : views.findings())
    if (finding.rule == rule) found.push_back(finding);
  return found;
}

TEST(PriorityInversion, ARealTimeThreadAboveEveryOtherWaitingOnANonPiMutex) {
  const std::vector<Finding> found = findings_of(inversion_profile(), "priority-inversion");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::kError);
  EXPECT_EQ(found[0].time_at_stake_ns, 5'000'000u);
  ASSERT_EQ(found[0].locks.size(), 1u);
  EXPECT_EQ(found[0].locks[0].lock, 0u);
  EXPECT_EQ(found[0].title,
            "sensor_mutex: a SCHED_FIFO 10 thread waited 5.00ms behind lower priority");
  ASSERT_EQ(found[0].sites.size(), 1u);
  EXPECT_EQ(found[0].sites[0].label, "control rt.c:12");
}

TEST(PriorityInversion, SilentWhereTheProfileCannotSayTheHolderRankedLower) {
  {  // A policy not recorded: that thread may have been a higher-priority holder.
    Profile profile = inversion_profile();
    profile.processes[0].threads[0].sched_known = false;
    EXPECT_TRUE(findings_of(profile, "priority-inversion").empty());
  }
  {  // Another thread of the same priority may have held it.
    Profile profile = inversion_profile();
    profile.processes[0].threads.push_back(thread(3, kRr, 10, 0));
    EXPECT_TRUE(findings_of(profile, "priority-inversion").empty());
  }
  {  // Priority inheritance bounds the wait: no inversion to report.
    Profile profile = inversion_profile();
    profile.processes[0].locks[0] = mutex("sensor_mutex", 5'000'000, format::kLockPriorityInherit);
    EXPECT_TRUE(findings_of(profile, "priority-inversion").empty());
  }
  {  // A PI mutex waited for too: which one the thread waited on is not recorded.
    Profile profile = inversion_profile();
    profile.processes[0].locks.push_back(mutex("pi_mutex", 1'000, format::kLockPriorityInherit));
    EXPECT_TRUE(findings_of(profile, "priority-inversion").empty());
  }
  {  // The real-time thread never waited for a mutex.
    Profile profile = inversion_profile();
    profile.processes[0].threads[1].wait_ns_by_primitive[kMutexSlot] = 0;
    EXPECT_TRUE(findings_of(profile, "priority-inversion").empty());
  }
}

TEST(PriorityInversion, TheHighestOfSeveralRealTimeThreadsOnly) {
  Profile profile = inversion_profile();
  profile.processes[0].threads.push_back(thread(3, kRr, 20, 2'000'000));
  const std::vector<Finding> found = findings_of(profile, "priority-inversion");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].time_at_stake_ns, 2'000'000u);
  EXPECT_NE(found[0].title.find("SCHED_RR 20"), std::string::npos) << found[0].title;
}

// Two locks taken in both orders, each nested acquisition's site `failed` once (with no wait: an
// EDEADLK, say) or blocked at the write (with its wait so far).
Profile cycle_profile(uint64_t waits_in_progress, uint64_t blocked_wait_ns) {
  Profile profile;
  ProcessProfile process;
  process.pid = 9;
  for (int i = 0; i < 2; ++i) {
    LockSummary lock = mutex(i == 0 ? "account_a" : "account_b", 0);
    lock.address = 0x1000 + 64 * i;
    SiteSummary& nested = lock.sites[0];
    nested.location.offset = 0x100 + i;
    nested.count = 2;
    nested.failed = 1;
    nested.wait_sum_ns = blocked_wait_ns;
    nested.wait_max_ns = blocked_wait_ns;
    lock.finish();
    process.locks.push_back(lock);
  }
  for (size_t from = 0; from < 2; ++from) {
    LockOrderEdge edge;
    edge.from_lock = from;
    edge.to_lock = 1 - from;
    edge.to_site = process.locks[1 - from].sites[0].location;
    edge.tid = uint32_t(10 + from);
    process.lock_order.push_back(edge);
  }
  process.counters[format::Counter::kWaitsInProgress] = waits_in_progress;
  profile.processes = {process};
  return profile;
}

TEST(Deadlock, ACycleWhoseNestedAcquisitionsWereBlockedAtTheWrite) {
  const Profile profile = cycle_profile(2, 7'000'000);
  const std::vector<Finding> found = findings_of(profile, "deadlock");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].time_at_stake_ns, 14'000'000u);
  EXPECT_EQ(found[0].title,
            "deadlock: threads hold account_a and account_b, each blocked on the other");
  EXPECT_TRUE(findings_of(profile, "lock-order-inversion").empty());
}

TEST(Deadlock, NotWithoutWaitsInProgressThereOnlyAPotentialOne) {
  for (const Profile& profile :
       {cycle_profile(0, 7'000'000), cycle_profile(1, 7'000'000), cycle_profile(2, 0)}) {
    EXPECT_TRUE(findings_of(profile, "deadlock").empty());
    EXPECT_EQ(findings_of(profile, "lock-order-inversion").size(), 1u);
  }
}

}  // namespace
}  // namespace lockscope
