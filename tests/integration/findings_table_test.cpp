// Every fixture below x every rule of rule_table(), on real runs under the real runtime: the
// rules a row expects fire, and no other (the verdict always does). A row may also tolerate a
// rule that is right about a run on a busy machine: when the test machine has more runnable
// threads than CPUs (ctest -j2 beside other work), holders are preempted inside their critical
// sections, and oversubscribed or serial-bottleneck then describe that run truly.
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <sched.h>

#include <set>

#include "analysis/diagnosis/rule_table.h"
#include "analysis/profile_views.h"
#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

struct TableRow {
  std::string fixture;
  std::vector<std::string> args;
  std::set<std::string> expected;  // besides the verdict
  std::set<std::string> tolerated = {};
  size_t cpus_needed = 1;
};

// Load can add these where threads contend: the run was preempted (a holder preempted inside
// its critical section makes a long hold too), and they say so.
const std::set<std::string> kLoad = {"oversubscribed", "serial-bottleneck", "long-hold"};

const std::vector<TableRow>& table_rows() {
  static const std::vector<TableRow> rows = {
      // Each rule's own fixture.
      {"rule_serial_bottleneck", {"30"}, {"serial-bottleneck"}, kLoad},
      {"rule_long_hold", {"10"}, {"long-hold"}},
      {"rule_hot_lock", {"2000000"}, {"hot-lock"}},
      {"rule_handoff_storm", {"20000"}, {"handoff-storm"}, kLoad, 2},
      {"rule_asymmetric_contention", {"200"}, {"asymmetric-contention"}, kLoad},
      {"rule_oversubscribed", {"1000"}, {"oversubscribed"}},
      {"rule_false_sharing", {"100000"}, {"false-sharing"}},
      {"rule_spin_burn", {"3", "100", "100"}, {"spin-burn"}},
      {"rule_lost_signals", {"1000"}, {"lost-signals"}},
      // The herd's 8 waiters re-take the mutex one after another: its owner changes on nearly
      // every acquisition, across CPUs, which handoff-storm may see too.
      {"rule_thundering_herd",
       {"8", "50"},
       {"thundering-herd"},
       {"oversubscribed", "serial-bottleneck", "long-hold", "handoff-storm"}},
      {"rule_rwlock_write_heavy", {"3", "1000", "10"}, {"rwlock-write-heavy"}, kLoad},
      // Another thread holds audit_lock for 20 ms while post waits for it: a long hold too.
      // Its SCHED_FIFO thread waits behind a SCHED_OTHER holder (root may set SCHED_FIFO; the
      // rule's own test skips where the fixture could not).
      {"rule_priority_inversion", {"30"}, {"priority-inversion"}, {"long-hold"}},
      {"rule_lock_order_inversion", {"20"}, {"lock-order-inversion", "long-hold"}},
      {"rule_deadlock", {"100"}, {"deadlock"}},
      // Existing fixtures. A holder that sleeps or works while another thread waits: long-hold.
      {"sleepy_holder", {"20"}, {"long-hold"}},
      {"cpu_handoffs", {"cross", "200"}, {"long-hold"}},
      {"condvar_split", {}, {"long-hold"}},
      // Whether the waiter comes while main still holds the mutex depends on the scheduler.
      {"condvar_hold", {"contended"}, {}, {"long-hold"}},
      {"recursive_blame", {"100"}, {"long-hold"}},
      {"blocking_holds", {"200", "20", "condvar"}, {"long-hold"}, kLoad},
      {"rwlock_sides", {"3", "200"}, {"long-hold"}, kLoad},
      // Main holds the mutex 50 ms after waking the waiter, then broadcasts 999 times to nobody.
      {"signals_after_wake", {}, {"lost-signals", "long-hold"}},
      // Its spinner spins 3 ms behind a holder that sleeps.
      {"spin_counter", {"1000"}, {"spin-burn", "long-hold"}},
      // Threads blocked until exit, once each: no queue, no deadlock.
      {"blocked_at_exit", {}, {}},
      // Three wrappers deep, threads queue on one lock, more or less as the scheduler has it.
      {"wrapped_locks", {"100"}, {}, kLoad},
      {"lock_order", {"inversion"}, {"lock-order-inversion"}},
      {"lock_order", {"wrapped"}, {"lock-order-inversion"}},
      {"lock_order", {"condwait"}, {"lock-order-inversion"}},
      // Its threads nest three locks in one order; when they overlap, they queue on lock_a.
      {"lock_order", {"consistent"}, {}, kLoad},
      {"condvar_wakeups", {"50"}, {}},
      {"semaphores", {"100"}, {}},
      {"barrier_rounds", {"20"}, {}},
      {"mutex_semantics", {}, {}},
      {"timed_holds", {}, {}},
      {"cxx_primitives", {}, {}},
      {"rwlock_unseen_lock", {}, {}},
      {"counter_threads",
       {"4", "20000"},
       {},
       {"oversubscribed", "serial-bottleneck", "long-hold", "hot-lock"}},
      {"handoffs",
       {"500"},
       {},
       {"oversubscribed", "serial-bottleneck", "long-hold", "handoff-storm"}},
      {"many_threads", {}, {}, kLoad},
  };
  return rows;
}

size_t allowed_cpus() {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof(set), &set) == 0 ? size_t(CPU_COUNT(&set)) : 1;
}

std::string describe(const std::vector<Finding>& findings) {
  std::string text;
  for (const Finding& finding : findings)
    text += fmt::format("[{}] {} (at stake {} ns)\n", finding.rule, finding.title,
                        finding.time_at_stake_ns);
  return text;
}

class FindingsTable : public ::testing::TestWithParam<size_t> {};

TEST_P(FindingsTable, OnlyTheExpectedRulesFire) {
  const TableRow& row = table_rows()[GetParam()];
  if (allowed_cpus() < row.cpus_needed)
    GTEST_SKIP() << row.fixture << " needs " << row.cpus_needed << " CPUs";
  TemporaryDirectory dir;
  std::vector<std::string> command = {"record", "-o", dir.path(), "--", fixture(row.fixture)};
  command.insert(command.end(), row.args.begin(), row.args.end());
  const CommandResult run = run_lockscope(command);
  ASSERT_EQ(run.exit_status, 0) << run.out << run.err;
  if (run.out.find("no SCHED_FIFO") != std::string::npos)  // rule_priority_inversion's fixture
    GTEST_SKIP() << "this system refuses SCHED_FIFO (no CAP_SYS_NICE, RLIMIT_RTPRIO 0)";
  const Profile profile = load_profile(dir.path());
  ASSERT_TRUE(profile.problems.empty());
  const ProfileViews views(profile);
  const std::vector<Finding>& findings = views.findings();
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings.front().rule, "verdict");
  std::set<std::string> fired;
  for (const Finding& finding : findings) fired.insert(finding.rule);
  fired.erase("verdict");
  for (const std::string& rule : row.expected)
    EXPECT_TRUE(fired.count(rule)) << rule << " did not fire on " << row.fixture << ":\n"
                                   << describe(findings);
  for (const std::string& rule : fired) {
    EXPECT_NE(find_rule(rule), nullptr) << rule;
    EXPECT_TRUE(row.expected.count(rule) || row.tolerated.count(rule))
        << rule << " fired on " << row.fixture << " " << fmt::format("{}", fmt::join(row.args, " "))
        << ":\n"
        << describe(findings);
  }
  // Ranked: the defects first, then by time at stake.
  for (size_t i = 2; i < findings.size(); ++i) {
    const bool error_before = findings[i - 1].severity == Severity::kError;
    const bool error_now = findings[i].severity == Severity::kError;
    EXPECT_TRUE(error_before || !error_now) << describe(findings);
    if (error_before == error_now) {
      EXPECT_GE(findings[i - 1].time_at_stake_ns, findings[i].time_at_stake_ns);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FindingsTable, ::testing::Range(size_t{0}, table_rows().size()),
                         [](const ::testing::TestParamInfo<size_t>& row) {
                           std::string name = table_rows()[row.param].fixture;
                           for (const std::string& arg : table_rows()[row.param].args)
                             name += "_" + arg;
                           return name;
                         });

}  // namespace
}  // namespace lockscope::testing
