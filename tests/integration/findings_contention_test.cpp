// The contention family's findings on real runs: each rule's fixture, recorded under the real
// runtime, yields its finding about the lock a person finds in the fixture's source, at the
// fixture's marked lines, with figures that agree with what the fixture measured itself. The
// table of every fixture x every rule is findings_table_test.cpp.
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "analysis/diagnosis/lock_pair_cost.h"
#include "analysis/diagnosis/rule_table.h"
#include "analysis/profile_views.h"
#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

// A fixture's run: its profile, the views (and so the findings) over it, and the "KEY VALUE"
// lines the fixture printed on stderr about what it measured.
struct RuleRun {
  TemporaryDirectory dir;
  Profile profile;
  std::unique_ptr<ProfileViews> views;
  std::map<std::string, long long> measured;
  std::string stderr_text;

  RuleRun(const std::string& fixture_name, const std::vector<std::string>& args) {
    std::vector<std::string> program = {fixture(fixture_name)};
    program.insert(program.end(), args.begin(), args.end());
    CommandResult recorded;
    profile = record_all_unchanged(dir, program, nullptr, &recorded);
    views = std::make_unique<ProfileViews>(profile);
    stderr_text = recorded.err;
    std::istringstream lines(recorded.err);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream fields(line);
      std::string key;
      long long value = 0;
      if (fields >> key >> value) measured[key] = value;
    }
  }
  const ProcessProfile& process() const { return profile.processes.at(0); }
  const std::vector<Finding>& findings() const { return views->findings(); }
  // The findings of `rule`.
  std::vector<const Finding*> of(const std::string& rule) const {
    std::vector<const Finding*> out;
    for (const Finding& finding : findings())
      if (finding.rule == rule) out.push_back(&finding);
    return out;
  }
  long long value(const std::string& key) const {
    auto it = measured.find(key);
    EXPECT_NE(it, measured.end()) << key << " not printed:\n" << stderr_text;
    return it == measured.end() ? 0 : it->second;
  }
  std::string describe() const {
    std::string text;
    for (const Finding& finding : findings()) {
      text += fmt::format("[{}] {} (at stake {} ns)\n", finding.rule, finding.title,
                          finding.time_at_stake_ns);
      for (const Evidence& evidence : finding.evidence)
        text += fmt::format("    {} = {}: {}\n", evidence.key, evidence.value, evidence.text);
      text += "    advice: " + finding.advice + "\n";
    }
    return text;
  }
};

// The one finding of `rule`, or a failure that lists what was found.
const Finding* only_finding(const RuleRun& run, const std::string& rule) {
  const std::vector<const Finding*> found = run.of(rule);
  EXPECT_EQ(found.size(), 1u) << rule << " findings; all findings:\n" << run.describe();
  return found.size() == 1 ? found.front() : nullptr;
}

double evidence(const Finding& finding, const std::string& key, size_t nth = 0) {
  for (const Evidence& item : finding.evidence)
    if (item.key == key && nth-- == 0) return item.value;
  ADD_FAILURE() << "no evidence " << key << " in " << finding.title;
  return -1;
}

bool at_marker(const CodeLocation& where, const std::string& fixture_name,
               const std::string& marker) {
  return located_at(where, fixture_name + ".c", marker_line(fixture_name, marker));
}

size_t allowed_cpus() {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof(set), &set) == 0 ? size_t(CPU_COUNT(&set)) : 1;
}

// Three writers take turns on journal_lock, each append holding it 1 ms: the waits are the lock's
// whole cost, and no cause rule explains them.
TEST(FindingsContention, SerialBottleneckNamesTheLockItsThreadsAndTheirShare) {
  RuleRun run("rule_serial_bottleneck", {"30"});
  const Finding* finding = only_finding(run, "serial-bottleneck");
  ASSERT_NE(finding, nullptr);
  ASSERT_EQ(finding->locks.size(), 1u);
  const LockSummary& lock = run.views->lock(finding->locks[0]);
  EXPECT_EQ(lock.name, "journal_lock");
  EXPECT_EQ(finding->title.rfind("journal_lock: ", 0), 0u) << finding->title;
  ASSERT_FALSE(finding->sites.empty());
  EXPECT_TRUE(at_marker(finding->sites[0], "rule_serial_bottleneck", "append-lock"));
  EXPECT_EQ(finding->time_at_stake_ns, lock.wait_sum_ns);
  // The profile's wait is the writers' time blocked in pthread_mutex_lock, as they timed it
  // around the call (which adds the uncontended calls' few hundred ns).
  const long long measured = run.value("writer_lock_ns");
  EXPECT_LE(finding->time_at_stake_ns, uint64_t(measured));
  EXPECT_GE(double(finding->time_at_stake_ns), 0.95 * double(measured));
  // Its threads: the three writers (main takes no lock), their share of time at least 10 %.
  EXPECT_EQ(evidence(*finding, "threads"), 3);
  const double share = evidence(*finding, "share");
  EXPECT_GE(share, 0.10);
  EXPECT_LE(share, 1.0);
  EXPECT_LE(finding->title.size(), 76u) << finding->title;
}

// One reader's lookups wait behind the rebuild's 3 ms holds at another site of table_lock.
TEST(FindingsContention, LongHoldNamesTheHoldingSiteAndItsHolds) {
  const int rounds = 10;
  RuleRun run("rule_long_hold", {std::to_string(rounds)});
  const Finding* finding = only_finding(run, "long-hold");
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(run.views->lock(finding->locks.at(0)).name, "table_lock");
  ASSERT_GE(finding->sites.size(), 2u);
  EXPECT_TRUE(at_marker(finding->sites[0], "rule_long_hold", "rebuild-lock"));
  EXPECT_TRUE(at_marker(finding->sites[1], "rule_long_hold", "lookup-lock"));
  const std::string holder =
      fmt::format("main rule_long_hold.c:{}", marker_line("rule_long_hold", "rebuild-lock"));
  EXPECT_NE(finding->title.find(holder), std::string::npos) << finding->title;
  EXPECT_NE(finding->advice.find(holder), std::string::npos) << finding->advice;
  // Every round the reader waited at least the 3 ms the rebuild slept once it was blocked, and
  // no longer than it timed itself in pthread_mutex_lock.
  EXPECT_EQ(evidence(*finding, "blamed_waits"), rounds);
  EXPECT_GE(finding->time_at_stake_ns, uint64_t(rounds) * 3 * kMs);
  EXPECT_LE(finding->time_at_stake_ns, uint64_t(run.value("reader_lock_ns")));
  // The site's holds as the fixture timed them (from the lock's return to the unlock call): the
  // profile's start a little earlier and end a little later.
  const double mean_hold = double(run.value("rebuild_hold_ns")) / rounds;
  EXPECT_GE(evidence(*finding, "site_mean_hold_ns"), 0.99 * mean_hold);
  EXPECT_LE(evidence(*finding, "site_mean_hold_ns"), 1.1 * mean_hold + 500'000);
  EXPECT_GE(evidence(*finding, "site_max_hold_ns"), double(run.value("rebuild_hold_max_ns")));
  EXPECT_GE(evidence(*finding, "site_mean_hold_ns"), 10 * evidence(*finding, "typical_hold_ns"));
  EXPECT_TRUE(run.of("serial-bottleneck").empty()) << "the cause claims the wait:\n"
                                                   << run.describe();
}

// 2,000,000 uncontended increments under stats_lock: the locking costs acquisitions x this
// machine's pair price, which no more than the loop's own time.
TEST(FindingsContention, HotLockCostsItsAcquisitionsAtTheMeasuredPairPrice) {
  const uint64_t increments = 2'000'000;
  RuleRun run("rule_hot_lock", {std::to_string(increments)});
  const Finding* finding = only_finding(run, "hot-lock");
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(run.views->lock(finding->locks.at(0)).name, "stats_lock");
  ASSERT_FALSE(finding->sites.empty());
  EXPECT_TRUE(at_marker(finding->sites[0], "rule_hot_lock", "count-lock"));
  const double pair_ns = uncontended_pair_ns(format::Primitive::kMutex);
  EXPECT_GT(pair_ns, 0.1);
  EXPECT_EQ(evidence(*finding, "acquisitions"), double(increments));
  EXPECT_EQ(evidence(*finding, "pair_ns"), pair_ns);
  EXPECT_EQ(finding->time_at_stake_ns, uint64_t(double(increments) * pair_ns));
  EXPECT_LT(finding->time_at_stake_ns, uint64_t(run.value("loop_ns")));
}

// Two threads pass a token under token_lock, each taking it on its turn from the other CPU.
TEST(FindingsContention, HandoffStormCountsTheFixturesOwnerChanges) {
  if (allowed_cpus() < 2) GTEST_SKIP() << "one CPU allowed: no lock can come from another CPU";
  RuleRun run("rule_handoff_storm", {"20000"});
  if (run.stderr_text.find("unpinned") != std::string::npos)
    GTEST_SKIP() << "the fixture could not pin its threads to CPUs 0 and 1";
  const Finding* finding = only_finding(run, "handoff-storm");
  ASSERT_NE(finding, nullptr);
  const LockSummary& lock = run.views->lock(finding->locks.at(0));
  EXPECT_EQ(lock.name, "token_lock");
  ASSERT_FALSE(finding->sites.empty());
  EXPECT_TRUE(at_marker(finding->sites[0], "rule_handoff_storm", "token-lock"));
  // The owner changes the fixture counted inside the critical section: 39,999 of 40,000.
  EXPECT_EQ(evidence(*finding, "handoffs"), double(run.value("owner_changes")));
  EXPECT_EQ(run.value("owner_changes"), 39999);
  EXPECT_GT(evidence(*finding, "cross_cpu_handoffs"), 0);
  EXPECT_GE(lock.cross_cpu_handoffs, lock.same_cpu_handoffs);
  EXPECT_EQ(finding->time_at_stake_ns, lock.wait_sum_ns);
  EXPECT_LE(evidence(*finding, "median_hold_ns"), 1000);
}

// Eight stripes initialised in one loop, three in four lookups hashed to stripe 0.
TEST(FindingsContention, AsymmetricContentionNamesTheHotStripeAndItsShare) {
  const long lookups = 200;
  RuleRun run("rule_asymmetric_contention", {std::to_string(lookups)});
  const Finding* finding = only_finding(run, "asymmetric-contention");
  ASSERT_NE(finding, nullptr);
  ASSERT_EQ(finding->locks.size(), 1u) << run.describe();
  const LockSummary& hot = run.views->lock(finding->locks[0]);
  EXPECT_EQ(hot.name_source, LockNameSource::kInitSite);
  EXPECT_TRUE(at_marker(hot.init_site, "rule_asymmetric_contention", "stripe-init"));
  EXPECT_EQ(hot.same_name_locks, 8u);
  // Stripe 0, the lowest address of the malloc'd array: "the 1st of 8".
  for (const LockSummary& lock : run.process().locks) {
    if (lock.name == hot.name) {
      EXPECT_GE(lock.address, hot.address);
    }
  }
  EXPECT_NE(finding->advice.find("the 1st"), std::string::npos) << finding->advice;
  ASSERT_GE(finding->sites.size(), 2u);
  EXPECT_TRUE(at_marker(finding->sites[0], "rule_asymmetric_contention", "stripe-init"));
  EXPECT_TRUE(at_marker(finding->sites[1], "rule_asymmetric_contention", "stripe-lock"));
  // Its acquisitions as the workers counted them (the multiples of 8, 600 of 800, and the other
  // keys that hash to it); its wait no more than their time in pthread_mutex_lock on it.
  EXPECT_EQ(hot.acquisitions, uint64_t(run.value("stripe0_acquisitions")));
  EXPECT_GE(hot.acquisitions, uint64_t(3 * lookups));
  EXPECT_EQ(finding->time_at_stake_ns, hot.wait_sum_ns);
  EXPECT_LE(finding->time_at_stake_ns, uint64_t(run.value("stripe0_lock_ns")));
  const std::string use_share =
      fmt::format("{:.1f} %", 100.0 * double(hot.acquisitions) / double(4 * lookups));
  EXPECT_NE(finding->advice.find(use_share), std::string::npos)
      << use_share << ": " << finding->advice;
  EXPECT_GT(evidence(*finding, "hot_wait_share"), 0.5);
  EXPECT_TRUE(run.of("serial-bottleneck").empty()) << run.describe();
}

// Four busy threads per CPU on queue_lock: holders preempted in 5 µs critical sections.
TEST(FindingsContention, OversubscribedComparesWaitsWithTheHoldsBehindThem) {
  RuleRun run("rule_oversubscribed", {"1000"});
  const Finding* finding = only_finding(run, "oversubscribed");
  ASSERT_NE(finding, nullptr);
  const LockSummary& lock = run.views->lock(finding->locks.at(0));
  EXPECT_EQ(lock.name, "queue_lock");
  ASSERT_FALSE(finding->sites.empty());
  EXPECT_TRUE(at_marker(finding->sites[0], "rule_oversubscribed", "queue-lock"));
  // The holds behind the waits: the mean hold the threads timed themselves (the profile's
  // start at the lock's return and end after the unlock: a little longer).
  const double mean_hold = double(run.value("hold_ns")) / double(run.value("holds"));
  EXPECT_GE(evidence(*finding, "hold_behind_ns"), 0.9 * mean_hold);
  EXPECT_LE(evidence(*finding, "hold_behind_ns"), 1.5 * mean_hold + 2000);
  EXPECT_GE(evidence(*finding, "mean_wait_ns"), 10 * evidence(*finding, "hold_behind_ns"));
  EXPECT_LE(finding->time_at_stake_ns, lock.wait_sum_ns);
  EXPECT_LE(lock.wait_sum_ns, uint64_t(run.value("lock_ns")));
  EXPECT_EQ(evidence(*finding, "threads"), double(run.value("threads") + 1));  // and main
  if (run.process().online_cpus == 0)
    EXPECT_NE(finding->advice.find("the CPU count is not known"), std::string::npos)
        << finding->advice;
  else
    EXPECT_NE(finding->advice.find(fmt::format("on {} CPUs", run.process().online_cpus)),
              std::string::npos)
        << finding->advice;
  EXPECT_TRUE(run.of("serial-bottleneck").empty()) << run.describe();
}

// Two threads, each with its own lock, the two locks in one line of the global `counters`.
TEST(FindingsContention, FalseSharingNamesBothLocksOfTheLine) {
  const uint64_t per_thread = 100'000;
  RuleRun run("rule_false_sharing", {std::to_string(per_thread)});
  EXPECT_EQ(run.value("one_line"), 1);
  const Finding* finding = only_finding(run, "false-sharing");
  ASSERT_NE(finding, nullptr);
  ASSERT_EQ(finding->locks.size(), 2u);
  // Named by the struct's members (DWARF types): "counters" and "counters+0x28" without them.
  EXPECT_EQ(run.views->lock(finding->locks[0]).name, "counters.reads_lock");
  EXPECT_EQ(run.views->lock(finding->locks[1]).name, "counters.writes_lock");
  EXPECT_EQ(finding->title,
            "counters.reads_lock and counters.writes_lock share one 64-byte cache line");
  EXPECT_NE(finding->advice.find("counters.reads_lock and counters.writes_lock"),
            std::string::npos);
  ASSERT_EQ(finding->sites.size(), 2u);
  for (const CodeLocation& site : finding->sites)
    EXPECT_TRUE(at_marker(site, "rule_false_sharing", "count-lock"));
  EXPECT_EQ(evidence(*finding, "acquisitions", 0), double(run.value("reads")));
  EXPECT_EQ(evidence(*finding, "acquisitions", 1), double(run.value("writes")));
  EXPECT_EQ(run.value("reads"), int64_t(per_thread));
  const double pair_ns = uncontended_pair_ns(format::Primitive::kMutex);
  EXPECT_EQ(finding->time_at_stake_ns, uint64_t(2 * double(per_thread) * pair_ns));
}

}  // namespace
}  // namespace lockscope::testing
