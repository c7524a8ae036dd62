// Golden tests of the report writers over a Profile built here (no files, no clocks), so every
// number is fixed. Regenerate after an intended change with LOCKSCOPE_UPDATE_GOLDEN=1.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "code_locations.h"
#include "report/report_writer.h"

namespace lockscope {
namespace {

LatencyHistogram histogram_of(std::initializer_list<std::pair<uint64_t, uint64_t>> values) {
  LatencyHistogram h;
  for (auto [ns, count] : values) h.add(LogHistogramLayout::bucket_of(ns), count);
  return h;
}

CodeLocation location(const std::string& function, const std::string& file, int line) {
  return code_location(function, file, line);
}

Profile golden_profile() {
  Profile profile;
  profile.directory = "prof";
  ProcessProfile p;
  p.file = "prof/4908-1.lsprof";
  p.pid = 4908;
  p.ppid = 4900;
  p.duration_ns = 1'234'000'000;
  p.hold_sample_period = 8;
  p.exit_status = 0;
  p.executable = "/usr/bin/git";
  p.arguments = {"git", "pack-objects"};
  p.modules.push_back(ModuleSummary{"/usr/bin/git", "ab01", 0, 0, 0});
  ThreadSummary main_thread;
  main_thread.tid = 4908;
  main_thread.name = "git";
  main_thread.flags = format::kThreadMain;
  main_thread.acquisitions = main_thread.releases = 10;
  main_thread.wait = histogram_of({{0, 10}});
  p.threads.push_back(main_thread);
  ThreadSummary worker;
  worker.tid = 4911;
  worker.name = "worker";
  worker.acquisitions = worker.releases = 196769;
  worker.contended = 600;
  worker.wait_sum_ns = 812'000'000;
  worker.wait_max_ns = 4'500'000;
  worker.wait = histogram_of({{0, 196169}, {800, 100}, {5000, 200}, {50000, 200}, {4500000, 100}});
  p.threads.push_back(worker);

  LockSummary hot;
  hot.address = 0x603498600;
  hot.kind = format::MutexKind::kNormal;
  hot.owner_changes = 1200;
  SiteSummary lock_site;
  lock_site.operation = format::Operation::kLock;
  lock_site.location = location("find_deltas", "builtin/pack-objects.c", 1695);
  lock_site.count = 196769;
  lock_site.contended = 600;
  lock_site.wait_sum_ns = 812'000'000;
  lock_site.wait_max_ns = 4'500'000;
  lock_site.hold_sum_ns = 45'000'000;
  lock_site.hold_max_ns = 90'000;
  lock_site.hold_samples = 24597;
  lock_site.wait = histogram_of({{800, 100}, {5000, 200}, {50000, 200}, {4500000, 100}});
  lock_site.hold = histogram_of({{200, 196769}});
  lock_site.blame = {
      Blame{location("find_deltas", "builtin/pack-objects.c", 1695), 500, 700'000'000},
      Blame{location("ll_find_deltas", "builtin/pack-objects.c", 1830), 100, 112'000'000}};
  lock_site.cross_cpu_handoffs = 450;
  lock_site.same_cpu_handoffs = 100;
  hot.sites.push_back(lock_site);
  SiteSummary unlock_site;
  unlock_site.operation = format::Operation::kUnlock;
  unlock_site.location = location("find_deltas", "builtin/pack-objects.c", 1702);
  unlock_site.count = 196769;
  hot.sites.push_back(unlock_site);
  SiteSummary trylock_site;
  trylock_site.operation = format::Operation::kTryLock;
  trylock_site.location = location("ll_find_deltas", "builtin/pack-objects.c", 1834);
  trylock_site.count = 12;
  trylock_site.failed = 2;
  hot.sites.push_back(trylock_site);
  hot.finish();
  p.locks.push_back(hot);

  LockSummary idle;
  idle.address = 0x600000010;
  idle.generation = 1;
  idle.kind = format::MutexKind::kRecursive;
  idle.flags = format::kLockInitSeen | format::kLockDestroyed;
  idle.init_site = location("init_recursive_mutex", "compat/win32/pthread.c", 44);
  idle.finish();
  p.locks.push_back(idle);
  p.counters[format::Counter::kUnbalancedUnlocks] = 3;
  profile.processes.push_back(p);
  profile.problems.push_back(ProfileProblem{"prof/7020-2.lsprof", "truncated: 812 of 7561 bytes"});
  return profile;
}

void expect_golden(const std::string& format, const ReportOptions& options,
                   const std::string& name) {
  std::ostringstream out;
  make_report_writer(format)->write(golden_profile(), options, out);
  const std::string path = std::string(LOCKSCOPE_SOURCE_DIR) + "/tests/golden/" + name;
  if (std::getenv("LOCKSCOPE_UPDATE_GOLDEN")) {
    std::ofstream(path) << out.str();
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing golden file " << path << " (LOCKSCOPE_UPDATE_GOLDEN=1 writes it)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(out.str(), expected.str()) << "golden file: " << path;
}

TEST(ReportGolden, Text) {
  expect_golden("text", ReportOptions{}, "report.txt");
}

TEST(ReportGolden, TextAllLocksSortedByAcquisitions) {
  ReportOptions options;
  options.all = true;
  options.sort_key = "acquisitions";
  expect_golden("text", options, "report-all-by-acquisitions.txt");
}

TEST(ReportGolden, Json) {
  expect_golden("json", ReportOptions{}, "report.json");
}

TEST(ReportGolden, Collapsed) {
  expect_golden("collapsed", ReportOptions{}, "report.collapsed");
}

TEST(ReportGolden, CollapsedByHold) {
  ReportOptions options;
  options.weight = StackWeight::kHold;
  expect_golden("collapsed", options, "report-hold.collapsed");
}

TEST(ReportGolden, Speedscope) {
  expect_golden("speedscope", ReportOptions{}, "report.speedscope.json");
}

TEST(ReportGolden, CsvLocks) {
  ReportOptions options;
  options.all = true;
  expect_golden("csv", options, "report-locks.csv");
}

TEST(ReportGolden, CsvSites) {
  ReportOptions options;
  options.table = "sites";
  expect_golden("csv", options, "report-sites.csv");
}

}  // namespace
}  // namespace lockscope
