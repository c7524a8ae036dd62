// A process-shared lock's rows are tied across processes only when they are one lock: the same
// address and generation, in processes of one fork/exec family (analysis/process_shared_ties.h,
// which the views hold and the text report names).
#include "analysis/process_shared_ties.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <vector>

#include "analysis/profile_views.h"
#include "report/report_writer.h"

namespace lockscope {
namespace {

ProcessProfile process_with_shared_lock(uint32_t pid, uint32_t ppid, uint32_t generation) {
  ProcessProfile p;
  p.pid = pid;
  p.ppid = ppid;
  p.duration_ns = 1'000'000;
  p.executable = "/bin/demo";
  LockSummary lock;
  lock.address = 0x7f0000001000;
  lock.generation = generation;
  lock.flags = format::kLockProcessShared;
  SiteSummary site;
  site.operation = format::Operation::kLock;
  site.count = 5;
  lock.sites.push_back(site);
  lock.finish();
  p.locks.push_back(lock);
  return p;
}

std::string text_of(const Profile& profile) {
  std::ostringstream out;
  ReportOptions options;
  options.all = true;
  make_report_writer("text")->write(profile, options, out);
  return out.str();
}

TEST(ProcessSharedTies, OnlyTheSameGenerationInTheSameFamilyIsTheSameLock) {
  Profile profile;
  profile.processes.push_back(process_with_shared_lock(100, 1, 0));    // the parent
  profile.processes.push_back(process_with_shared_lock(101, 100, 0));  // its child: the same lock
  profile.processes.push_back(
      process_with_shared_lock(102, 100, 1));  // a child that re-initialised it
  profile.processes.push_back(process_with_shared_lock(200, 1, 0));  // unrelated, same address
  using Ties = std::map<size_t, std::vector<uint32_t>>;
  const std::vector<Ties> ties = find_process_shared_ties(profile);
  ASSERT_EQ(ties.size(), 4u);
  EXPECT_EQ(ties[0], (Ties{{0, {101}}})) << "the parent's lock is its child's";
  EXPECT_EQ(ties[1], (Ties{{0, {100}}}));
  EXPECT_EQ(ties[2], Ties{}) << "another generation is another lock";
  EXPECT_EQ(ties[3], Ties{}) << "an unrelated process is another lock";
  const ProfileViews views(profile);
  EXPECT_EQ(views.processes()[0].shared_with, ties[0]);
  const std::string text = text_of(profile);
  EXPECT_NE(text.find("(process-shared; also used by pid 101)"), std::string::npos) << text;
  EXPECT_NE(text.find("(process-shared; also used by pid 100)"), std::string::npos) << text;
  EXPECT_EQ(text.find("also used by pid 100, 101"), std::string::npos) << text;
  EXPECT_EQ(text.find("also used by pid 200"), std::string::npos) << text;
}

}  // namespace
}  // namespace lockscope
