// The thread and process facts sections (kThreadFacts, kProcessFacts): files without them (older
// writers) still read, with every fact not known; files with them fill the model, a thread
// without a record stays not known, and bad references are damage. The JSON report then carries
// only what is known.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/profile_reader.h"
#include "common/profile_format.h"
#include "profile_file_builder.h"
#include "report/report_writer.h"

namespace lockscope {
namespace {

using namespace format;

constexpr uint64_t kDurationNs = 900'000'000;

// A process of two threads (the main one and a worker), no locks.
ProfileFileBuilder two_threads(uint32_t version = kVersion) {
  ProfileFileBuilder b;
  b.version = version;
  ProcessRecord p{};
  p.pid = 100;
  p.duration_ns = kDurationNs;
  p.ticks_per_second = 1e9;
  p.clock_source = static_cast<uint32_t>(ClockSource::kMonotonic);
  p.hold_sample_period = 1;
  p.exit_path = static_cast<uint32_t>(ExitPath::kExit);
  p.executable = b.add_string("/bin/app");
  p.command_line = b.add_string(std::string("app\0", 4));
  b.process.push_back(p);
  for (const uint32_t tid : {100u, 101u}) {
    ThreadRecord t{};
    t.tid = tid;
    t.flags = tid == 100 ? kThreadMain : kThreadExited;
    b.threads.push_back(t);
  }
  return b;
}

template <typename Record>
void add_section(ProfileFileBuilder& b, SectionType type, const std::vector<Record>& records) {
  b.extra_sections.push_back({static_cast<uint32_t>(type), sizeof(Record),
                              std::string(reinterpret_cast<const char*>(records.data()),
                                          records.size() * sizeof(Record))});
}

ThreadFactsRecord worker_facts() {
  return ThreadFactsRecord{1,          kThreadLifetimeKnown | kThreadCpuKnown | kThreadSchedKnown,
                           20'000'000, 130'000'000,
                           50'000'000, 1 /* SCHED_FIFO */,
                           7};
}

class ThreadFactsReader : public ::testing::Test {
 protected:
  std::variant<ProcessProfile, std::string> read(const ProfileFileBuilder& b) {
    path_ = (std::filesystem::temp_directory_path() /
             ("lockscope-facts-" + std::to_string(getpid()) + ".lsprof"))
                .string();
    std::ofstream(path_, std::ios::binary) << b.bytes();
    return read_profile_file(path_);
  }
  ProcessProfile read_ok(const ProfileFileBuilder& b) {
    auto result = read(b);
    if (auto* problem = std::get_if<std::string>(&result)) ADD_FAILURE() << *problem;
    return std::holds_alternative<ProcessProfile>(result) ? std::get<ProcessProfile>(result)
                                                          : ProcessProfile{};
  }
  std::string read_error(const ProfileFileBuilder& b) {
    auto result = read(b);
    return std::holds_alternative<std::string>(result) ? std::get<std::string>(result) : "read";
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_;
};

void expect_nothing_known(const ProcessProfile& p) {
  EXPECT_EQ(p.online_cpus, 0u);
  ASSERT_EQ(p.threads.size(), 2u);
  for (const ThreadSummary& t : p.threads) {
    EXPECT_FALSE(t.lifetime_known) << t.tid;
    EXPECT_FALSE(t.cpu_known) << t.tid;
    EXPECT_FALSE(t.sched_known) << t.tid;
  }
}

TEST_F(ThreadFactsReader, OlderFilesWithoutTheSectionsReadWithNothingKnown) {
  expect_nothing_known(read_ok(two_threads(3)));
  expect_nothing_known(read_ok(two_threads(4)));  // a version-4 file of a runtime before them
}

TEST_F(ThreadFactsReader, ARecordFillsItsThreadAndAThreadWithoutOneStaysUnknown) {
  ProfileFileBuilder b = two_threads();
  add_section(b, SectionType::kThreadFacts, std::vector{worker_facts()});
  add_section(b, SectionType::kProcessFacts, std::vector{ProcessFactsRecord{6, 0}});
  const ProcessProfile p = read_ok(b);
  EXPECT_EQ(p.online_cpus, 6u);
  ASSERT_EQ(p.threads.size(), 2u);
  EXPECT_FALSE(p.threads[0].lifetime_known || p.threads[0].cpu_known || p.threads[0].sched_known);
  const ThreadSummary& worker = p.threads[1];
  ASSERT_TRUE(worker.lifetime_known);
  EXPECT_EQ(worker.start_ns, 20'000'000u);
  EXPECT_EQ(worker.end_ns, 130'000'000u);
  ASSERT_TRUE(worker.cpu_known);
  EXPECT_EQ(worker.cpu_ns, 50'000'000u);
  ASSERT_TRUE(worker.sched_known);
  EXPECT_EQ(worker.sched_policy, 1);
  EXPECT_EQ(worker.sched_priority, 7);
  EXPECT_EQ(p.unknown_sections, 0u);
}

TEST_F(ThreadFactsReader, OnlyWhatItsFlagsSayIsKnown) {
  ProfileFileBuilder b = two_threads();
  ThreadFactsRecord facts = worker_facts();
  facts.known = kThreadSchedKnown;
  add_section(b, SectionType::kThreadFacts, std::vector{facts});
  const ThreadSummary worker = read_ok(b).threads.at(1);
  EXPECT_FALSE(worker.lifetime_known);
  EXPECT_EQ(worker.start_ns, 0u);
  EXPECT_FALSE(worker.cpu_known);
  EXPECT_EQ(worker.cpu_ns, 0u);
  EXPECT_TRUE(worker.sched_known);
}

TEST_F(ThreadFactsReader, AnEndBeforeItsStartIsNoLifetimeAndOnePastTheWriteIsCapped) {
  ProfileFileBuilder b = two_threads();
  ThreadFactsRecord backwards = worker_facts();
  backwards.end_ns = backwards.start_ns - 1;
  add_section(b, SectionType::kThreadFacts, std::vector{backwards});
  EXPECT_FALSE(read_ok(b).threads.at(1).lifetime_known);

  ProfileFileBuilder late = two_threads();
  ThreadFactsRecord past = worker_facts();
  past.end_ns = kDurationNs + 3'000;  // the TSC's rate against the monotonic clock's
  add_section(late, SectionType::kThreadFacts, std::vector{past});
  const ThreadSummary worker = read_ok(late).threads.at(1);
  EXPECT_TRUE(worker.lifetime_known);
  EXPECT_EQ(worker.end_ns, kDurationNs);
}

TEST_F(ThreadFactsReader, BadReferencesAreDamage) {
  ProfileFileBuilder missing = two_threads();
  ThreadFactsRecord facts = worker_facts();
  facts.thread = 2;
  add_section(missing, SectionType::kThreadFacts, std::vector{facts});
  EXPECT_EQ(read_error(missing), "a thread facts record refers to a missing thread");

  ProfileFileBuilder twice = two_threads();
  add_section(twice, SectionType::kThreadFacts, std::vector{worker_facts(), worker_facts()});
  EXPECT_EQ(read_error(twice), "a thread has two thread facts records");

  ProfileFileBuilder two_processes = two_threads();
  add_section(two_processes, SectionType::kProcessFacts,
              std::vector{ProcessFactsRecord{2, 0}, ProcessFactsRecord{4, 0}});
  EXPECT_EQ(read_error(two_processes), "the process facts section must hold one record at most");

  ProfileFileBuilder wrong_size = two_threads();
  wrong_size.extra_sections.push_back(
      {static_cast<uint32_t>(SectionType::kThreadFacts), 32, std::string(32, '\0')});
  EXPECT_EQ(read_error(wrong_size), "section 'thread facts' has records of 32 bytes, expected 40");
}

TEST_F(ThreadFactsReader, TheJsonReportCarriesOnlyWhatIsKnown) {
  ProfileFileBuilder b = two_threads();
  add_section(b, SectionType::kThreadFacts, std::vector{worker_facts()});
  add_section(b, SectionType::kProcessFacts, std::vector{ProcessFactsRecord{6, 0}});
  Profile with;
  with.processes.push_back(read_ok(b));
  Profile without;
  without.processes.push_back(read_ok(two_threads(3)));
  auto json_of = [](const Profile& profile) {
    std::ostringstream out;
    make_report_writer("json")->write(profile, ReportOptions{}, out);
    return nlohmann::json::parse(out.str())["processes"][0];
  };
  const auto known = json_of(with);
  EXPECT_EQ(known["online_cpus"], 6);
  const auto& worker = known["threads"][1];
  EXPECT_EQ(worker["start_ns"], 20'000'000);
  EXPECT_EQ(worker["end_ns"], 130'000'000);
  EXPECT_EQ(worker["cpu_ns"], 50'000'000);
  EXPECT_EQ(worker["sched_policy"], "SCHED_FIFO");
  EXPECT_EQ(worker["sched_priority"], 7);
  for (const auto& process : {known, json_of(without)}) {
    const auto& unknown = process["threads"][0];
    for (const char* key : {"start_ns", "end_ns", "cpu_ns", "sched_policy", "sched_priority"})
      EXPECT_FALSE(unknown.contains(key)) << key;
  }
  EXPECT_FALSE(json_of(without).contains("online_cpus"));
}

}  // namespace
}  // namespace lockscope
