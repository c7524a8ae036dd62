// The event rules (spin-burn, lost-signals, thundering-herd, rwlock-write-heavy,
// priority-inversion, lock-order-inversion, deadlock) over their own fixtures, run under the real
// runtime: each finding names its lock as the fixture's source does and points at the fixture's
// lines, and its figures agree with what the fixture measured itself. Then a table: every
// fixture below against every rule of rule_table(), the rules that fire on each and no other.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "analysis/diagnosis/rule_table.h"
#include "analysis/profile_views.h"
#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

struct Recorded {
  CommandResult run;
  Profile profile;
  std::vector<Finding> findings;
};

// `lockscope record` of a fixture (whose output may differ from a plain run's: it prints what it
// measured), then the profile as `lockscope report` reads it, and its findings.
Recorded record_fixture(const TemporaryDirectory& dir, const std::string& name,
                        const std::vector<std::string>& args) {
  std::vector<std::string> command = {"record", "-o", dir.path(), "--", fixture(name)};
  command.insert(command.end(), args.begin(), args.end());
  Recorded recorded;
  recorded.run = run_lockscope(command);
  EXPECT_EQ(recorded.run.exit_status, 0) << recorded.run.out << recorded.run.err;
  recorded.profile = load_profile(dir.path());
  EXPECT_TRUE(recorded.profile.problems.empty());
  const ProfileViews views(recorded.profile);
  recorded.findings = views.findings();
  return recorded;
}

// The value the fixture printed on its "KEY N" lines, each in turn.
std::vector<long long> printed(const std::string& out, const std::string& key) {
  std::vector<long long> values;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(key + " ", 0) == 0) values.push_back(std::stoll(line.substr(key.size() + 1)));
  return values;
}

long long printed_one(const std::string& out, const std::string& key) {
  const std::vector<long long> values = printed(out, key);
  EXPECT_EQ(values.size(), 1u) << key << " in:\n" << out;
  return values.empty() ? -1 : values.front();
}

std::string describe(const std::vector<Finding>& findings) {
  std::string text;
  for (const Finding& finding : findings)
    text += fmt::format("  {} [{}] {} (at stake {} ns)\n", finding.rule,
                        severity_name(finding.severity), finding.title, finding.time_at_stake_ns);
  return text;
}

std::vector<const Finding*> of_rule(const std::vector<Finding>& findings, const std::string& rule) {
  std::vector<const Finding*> found;
  for (const Finding& finding : findings)
    if (finding.rule == rule) found.push_back(&finding);
  return found;
}

const Evidence* evidence(const Finding& finding, const std::string& key) {
  for (const Evidence& item : finding.evidence)
    if (item.key == key) return &item;
  ADD_FAILURE() << "no evidence " << key << " in " << finding.title;
  return nullptr;
}

double evidence_value(const Finding& finding, const std::string& key) {
  const Evidence* item = evidence(finding, key);
  return item ? item->value : -1;
}

const LockSummary& lock_of(const Profile& profile, const FindingLock& which) {
  return profile.processes[which.process].locks[which.lock];
}

// The names of the finding's locks, each once.
std::set<std::string> lock_names(const Recorded& recorded, const Finding& finding) {
  std::set<std::string> names;
  for (const FindingLock& which : finding.locks)
    names.insert(lock_of(recorded.profile, which).name);
  return names;
}

// Whether one of the finding's sites is at the fixture's marked line.
bool points_at(const Finding& finding, const std::string& fixture_name, const std::string& marker) {
  const int line = marker_line(fixture_name, marker);
  return std::any_of(finding.sites.begin(), finding.sites.end(), [&](const CodeLocation& site) {
    return located_at(site, fixture_name + ".c", line);
  });
}

// The one finding of `rule`, checked to name `lock` first ("": not checked).
const Finding* the_finding(const Recorded& recorded, const std::string& rule,
                           const std::string& lock) {
  const std::vector<const Finding*> found = of_rule(recorded.findings, rule);
  EXPECT_EQ(found.size(), 1u) << describe(recorded.findings);
  if (found.size() != 1) return nullptr;
  const Finding& finding = *found.front();
  EXPECT_FALSE(finding.locks.empty());
  if (finding.locks.empty()) return nullptr;
  if (!lock.empty()) {
    EXPECT_EQ(lock_of(recorded.profile, finding.locks.front()).name, lock) << finding.title;
    EXPECT_NE(finding.title.find(lock), std::string::npos) << finding.title;
  }
  EXPECT_FALSE(finding.advice.empty());
  return &finding;
}

TEST(FindingsEvents, SpinBurnNamesTheSpinlockAndCountsTheSpinningTheFixtureTimed) {
  TemporaryDirectory dir;
  const Recorded recorded = record_fixture(dir, "rule_spin_burn", {"3", "100", "100"});
  const Finding* finding = the_finding(recorded, "spin-burn", "burner_spin");
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->severity, Severity::kWarning);
  ASSERT_FALSE(finding->sites.empty());
  EXPECT_TRUE(located_at(finding->sites.front(), "rule_spin_burn.c",
                         marker_line("rule_spin_burn", "burner-lock")));
  // The runtime times a spin from its failed trylock to the acquisition; the fixture times each
  // whole call, uncontended ones included: a little more, never less.
  const LockSummary& lock = lock_of(recorded.profile, finding->locks.front());
  const long long spun = printed_one(recorded.run.out, "spin_ns");
  EXPECT_EQ(finding->time_at_stake_ns, lock.wait_sum_ns);
  EXPECT_LE(finding->time_at_stake_ns, uint64_t(spun));
  EXPECT_GE(double(finding->time_at_stake_ns), 0.9 * double(spun));
  EXPECT_EQ(evidence_value(*finding, "spin_ns"), double(lock.wait_sum_ns));
  // Compared with CPU time where the profile has it: that of the burners that spun, at most what
  // all of them measured of their own (and their exit's few microseconds); else with their thread
  // time, which the evidence then names.
  const ProcessProfile& process = recorded.profile.processes.front();
  const bool cpu_known = std::all_of(process.threads.begin(), process.threads.end(),
                                     [](const ThreadSummary& t) { return t.cpu_known; });
  if (cpu_known) {
    EXPECT_GT(evidence_value(*finding, "cpu_ns"), 0);
    EXPECT_LE(evidence_value(*finding, "cpu_ns"),
              1.1 * double(printed_one(recorded.run.out, "cpu_ns")) + 5e6);
  } else {
    // No thread spins longer than it lives.
    EXPECT_GE(evidence_value(*finding, "thread_time_ns"), double(finding->time_at_stake_ns));
  }
  EXPECT_GE(evidence_value(*finding, "share"), 0.10);
}

TEST(FindingsEvents, LostSignalsCountsTheSignalsThatFoundNobody) {
  TemporaryDirectory dir;
  const Recorded recorded = record_fixture(dir, "rule_lost_signals", {"1000"});
  const Finding* finding = the_finding(recorded, "lost-signals", "updates_cond");
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->severity, Severity::kNote);
  ASSERT_FALSE(finding->sites.empty());
  EXPECT_TRUE(located_at(finding->sites.front(), "rule_lost_signals.c",
                         marker_line("rule_lost_signals", "lonely-signal")));
  EXPECT_EQ(evidence_value(*finding, "without_waiters"),
            double(printed_one(recorded.run.out, "lonely")));
  EXPECT_EQ(evidence_value(*finding, "with_waiters"),
            double(printed_one(recorded.run.out, "found")));
  // Signals are counted, not timed: nothing measured is at stake, and the finding says so.
  EXPECT_EQ(finding->time_at_stake_ns, 0u);
  EXPECT_EQ(evidence(*finding, "time_at_stake_ns")->text.rfind("not measured", 0), 0u);
}

TEST(FindingsEvents, ThunderingHerdNamesTheCondvarItsMutexAndTheQueueing) {
  TemporaryDirectory dir;
  const Recorded recorded = record_fixture(dir, "rule_thundering_herd", {"8", "50"});
  const Finding* finding = the_finding(recorded, "thundering-herd", "work_cond");
  ASSERT_NE(finding, nullptr);
  ASSERT_EQ(finding->locks.size(), 2u);
  const LockSummary& mutex = lock_of(recorded.profile, finding->locks[1]);
  EXPECT_EQ(mutex.name, "work_mutex");
  EXPECT_NE(finding->title.find("work_mutex"), std::string::npos) << finding->title;
  ASSERT_FALSE(finding->sites.empty());
  EXPECT_TRUE(located_at(finding->sites.front(), "rule_thundering_herd.c",
                         marker_line("rule_thundering_herd", "work-broadcast")));
  EXPECT_TRUE(points_at(*finding, "rule_thundering_herd", "worker-wait"));
  // Every broadcast found all 8 waiters, and the waiters counted each wake-up themselves.
  const long long broadcasts = printed_one(recorded.run.out, "broadcasts");
  const long long woken = printed_one(recorded.run.out, "woken");
  EXPECT_EQ(evidence_value(*finding, "broadcasts"), double(broadcasts));
  EXPECT_EQ(evidence_value(*finding, "woken_per_broadcast"), double(woken) / double(broadcasts));
  // Main broadcast holding the mutex: every woken waiter waited for it, the futile ones too.
  EXPECT_GE(evidence_value(*finding, "reacquire_contended"),
            double(printed_one(recorded.run.out, "futile")));
  const SiteSummary* reacquire =
      site_of(mutex, "rule_thundering_herd", "worker-wait", format::Operation::kCondReacquire);
  ASSERT_NE(reacquire, nullptr);
  EXPECT_EQ(reacquire->count, uint64_t(woken));
  EXPECT_EQ(finding->time_at_stake_ns, reacquire->wait_sum_ns);
  EXPECT_EQ(finding->time_at_stake_ns, mutex.reacquire_wait_ns);
  EXPECT_GT(finding->time_at_stake_ns, 0u);
}

TEST(FindingsEvents, RwlockWriteHeavyCountsTheFixturesWritesAndReads) {
  TemporaryDirectory dir;
  const Recorded recorded = record_fixture(dir, "rule_rwlock_write_heavy", {"3", "1000", "10"});
  const Finding* finding = the_finding(recorded, "rwlock-write-heavy", "table_lock");
  ASSERT_NE(finding, nullptr);
  ASSERT_FALSE(finding->sites.empty());
  EXPECT_TRUE(located_at(finding->sites.front(), "rule_rwlock_write_heavy.c",
                         marker_line("rule_rwlock_write_heavy", "table-write")));
  EXPECT_TRUE(points_at(*finding, "rule_rwlock_write_heavy", "table-read"));
  const long long writes = printed_one(recorded.run.out, "writes");
  const long long reads = printed_one(recorded.run.out, "reads");
  EXPECT_EQ(evidence_value(*finding, "writes"), double(writes));
  EXPECT_EQ(evidence_value(*finding, "reads"), double(reads));
  EXPECT_DOUBLE_EQ(evidence_value(*finding, "write_share"),
                   double(writes) / double(writes + reads));
  const LockSummary& lock = lock_of(recorded.profile, finding->locks.front());
  EXPECT_EQ(finding->time_at_stake_ns, lock.wait_sum_ns);
  EXPECT_EQ(lock.wait_sum_ns, lock.read_side.wait_sum_ns + lock.write_side.wait_sum_ns);
}

TEST(FindingsEvents, PriorityInversionNamesTheMutexARealTimeThreadWaitedOn) {
  TemporaryDirectory dir;
  const Recorded recorded = record_fixture(dir, "rule_priority_inversion", {"30"});
  if (recorded.run.out.find("no SCHED_FIFO") != std::string::npos)
    GTEST_SKIP() << "this system refuses SCHED_FIFO (no CAP_SYS_NICE, RLIMIT_RTPRIO 0)";
  ASSERT_EQ(recorded.profile.processes.size(), 1u);
  const ProcessProfile& process = recorded.profile.processes.front();
  if (!std::all_of(process.threads.begin(), process.threads.end(),
                   [](const ThreadSummary& t) { return t.sched_known; })) {
    EXPECT_TRUE(of_rule(recorded.findings, "priority-inversion").empty());
    GTEST_SKIP() << "this runtime does not record threads' scheduling policies "
                    "(ThreadSummary::sched_known): the rule cannot tell real-time threads";
  }
  const Finding* finding = the_finding(recorded, "priority-inversion", "sensor_mutex");
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->severity, Severity::kError);
  ASSERT_FALSE(finding->sites.empty());
  EXPECT_TRUE(located_at(finding->sites.front(), "rule_priority_inversion.c",
                         marker_line("rule_priority_inversion", "control-lock")));
  EXPECT_TRUE(points_at(*finding, "rule_priority_inversion", "logger-lock"));
  const long long waited = printed_one(recorded.run.out, "control_wait_ns");
  EXPECT_LE(finding->time_at_stake_ns, uint64_t(waited));
  // The fixture's own figure also holds the runtime's work around the wait (a first stack walk
  // can take milliseconds): the floor is the hold instead. The holder sleeps 30 ms from when it
  // raised its flag; the SCHED_FIFO thread polls that flag every millisecond and preempts to run.
  EXPECT_GE(finding->time_at_stake_ns, (30 - 2) * kMs);
  EXPECT_NE(finding->title.find("SCHED_FIFO 10"), std::string::npos) << finding->title;
}

TEST(FindingsEvents, LockOrderInversionNamesBothLocksAndBothOrdersSites) {
  TemporaryDirectory dir;
  const Recorded recorded = record_fixture(dir, "rule_lock_order_inversion", {"20"});
  // The cycle, from either of its locks.
  const Finding* finding = the_finding(recorded, "lock-order-inversion", "");
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->severity, Severity::kError);
  ASSERT_EQ(finding->locks.size(), 2u);
  EXPECT_EQ(lock_names(recorded, *finding), (std::set<std::string>{"ledger_lock", "audit_lock"}));
  for (const char* name : {"ledger_lock", "audit_lock"})
    EXPECT_NE(finding->title.find(name), std::string::npos) << finding->title;
  for (const char* marker : {"post-ledger", "post-audit", "review-audit", "review-ledger"})
    EXPECT_TRUE(points_at(*finding, "rule_lock_order_inversion", marker)) << marker;
  EXPECT_FALSE(points_at(*finding, "rule_lock_order_inversion", "bystander-lock"));
  // The one nested acquisition that waited: post's, holding ledger_lock, as post timed it.
  const long long waited = printed_one(recorded.run.out, "nested_wait_ns");
  EXPECT_LE(finding->time_at_stake_ns, uint64_t(waited));
  EXPECT_GE(double(finding->time_at_stake_ns), 0.9 * double(waited));
  EXPECT_TRUE(of_rule(recorded.findings, "deadlock").empty()) << describe(recorded.findings);
}

TEST(FindingsEvents, DeadlockNamesTheCycleOfThreadsStillBlockedAtExit) {
  TemporaryDirectory dir;
  const Recorded recorded = record_fixture(dir, "rule_deadlock", {"100"});
  const Finding* finding = the_finding(recorded, "deadlock", "");
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->severity, Severity::kError);
  ASSERT_EQ(finding->locks.size(), 2u);
  EXPECT_EQ(lock_names(recorded, *finding), (std::set<std::string>{"account_a", "account_b"}));
  for (const char* name : {"account_a", "account_b"})
    EXPECT_NE(finding->title.find(name), std::string::npos) << finding->title;
  for (const char* marker : {"ab-first", "ab-second", "ba-first", "ba-second"})
    EXPECT_TRUE(points_at(*finding, "rule_deadlock", marker)) << marker;
  // The cycle is the deadlock's, not also a potential one.
  EXPECT_TRUE(of_rule(recorded.findings, "lock-order-inversion").empty())
      << describe(recorded.findings);
  // Both threads blocked from just after the fixture's stamp to the profile's write, which
  // follows the fixture's print: at least what it measured, and not a second more.
  long long blocked = 0;
  for (long long ns : printed(recorded.run.out, "blocked_ns")) blocked += ns;
  EXPECT_EQ(printed(recorded.run.out, "blocked_ns").size(), 2u);
  EXPECT_GE(double(finding->time_at_stake_ns), 0.95 * double(blocked));
  EXPECT_LE(finding->time_at_stake_ns, uint64_t(blocked) + 2000 * kMs);
  EXPECT_EQ(evidence_value(*finding, "waits_in_progress"), 2);
}

// The demo: contention on its std::mutex, none of the event rules' causes.
TEST(FindingsEvents, TheDemoYieldsNoEventFinding) {
  TemporaryDirectory dir;
  const CommandResult run =
      run_lockscope({"record", "-o", dir.path(), "--", DEMO_BINARY, "4", "20000"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  const Profile profile = load_profile(dir.path());
  const ProfileViews views(profile);
  for (const Finding& finding : views.findings())
    for (const char* rule : {"spin-burn", "lost-signals", "thundering-herd", "rwlock-write-heavy",
                             "priority-inversion", "lock-order-inversion", "deadlock"})
      EXPECT_NE(finding.rule, rule) << describe(views.findings());
}

}  // namespace
}  // namespace lockscope::testing
