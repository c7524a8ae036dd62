// The reader against files built here field by field (round trip), and against every kind of
// damage: each truncation length and each flipped byte must give an error message or a valid
// profile, never a crash.
#include "analysis/profile_reader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/crc32.h"
#include "common/log_histogram.h"
#include "common/profile_format.h"

namespace lockscope {
namespace {

using namespace format;

class ProfileFileBuilder {
 public:
  StringRef add_string(const std::string& text) {
    StringRef ref{static_cast<uint32_t>(strings_.size()), static_cast<uint32_t>(text.size())};
    strings_ += text;
    return ref;
  }
  HistogramRef add_histogram(std::initializer_list<std::pair<uint32_t, uint64_t>> bins) {
    HistogramRef ref{static_cast<uint32_t>(bins_.size()), static_cast<uint32_t>(bins.size())};
    for (auto [bucket, count] : bins) bins_.push_back(HistogramBin{bucket, 0, count});
    return ref;
  }
  template <typename Record>
  void add(std::vector<Record>& into, const Record& record) { into.push_back(record); }

  std::vector<ProcessRecord> process;
  std::vector<ModuleRecord> modules;
  std::vector<ThreadRecord> threads;
  std::vector<LockRecord> locks;
  std::vector<SiteRecord> sites;
  std::vector<CounterRecord> counters;
  std::vector<LockOrderRecord> order;  // written only when not empty (as in a version 2 file)
  uint32_t version = kVersion;

  std::string bytes() const {
    std::string body;
    uint32_t sections = 0;
    auto section = [&](SectionType type, uint32_t record_size, const void* data, size_t size) {
      SectionHeader header{static_cast<uint32_t>(type), record_size,
                           record_size ? size / record_size : 0, size, crc32(0, data, size), 0};
      body.append(reinterpret_cast<const char*>(&header), sizeof(header));
      body.append(static_cast<const char*>(data), size);
      ++sections;
    };
    auto records = [&](SectionType type, const auto& list) {
      using Record = typename std::decay_t<decltype(list)>::value_type;
      section(type, sizeof(Record), list.data(), list.size() * sizeof(Record));
    };
    section(SectionType::kStrings, 1, strings_.data(), strings_.size());
    records(SectionType::kProcess, process);
    records(SectionType::kModules, modules);
    records(SectionType::kThreads, threads);
    records(SectionType::kLocks, locks);
    records(SectionType::kSites, sites);
    records(SectionType::kHistograms, bins_);
    records(SectionType::kCounters, counters);
    if (!order.empty()) records(SectionType::kLockOrder, order);
    section(SectionType::kEnd, 0, "", 0);
    FileHeader header{};
    std::memcpy(header.magic, kMagic, sizeof(kMagic));
    header.version = version;
    header.header_size = sizeof(FileHeader);
    header.file_size = sizeof(FileHeader) + body.size();
    header.section_count = sections;
    header.header_crc = crc32(0, &header, sizeof(header));
    return std::string(reinterpret_cast<const char*>(&header), sizeof(header)) + body;
  }

 private:
  std::string strings_;
  std::vector<HistogramBin> bins_;
};

ProfileFileBuilder sample_profile() {
  ProfileFileBuilder b;
  ProcessRecord p{};
  p.pid = 4908;
  p.ppid = 1;
  p.duration_ns = 123456789;
  p.ticks_per_second = 2.1e9;
  p.clock_source = static_cast<uint32_t>(ClockSource::kTsc);
  p.hold_sample_period = 8;
  p.exit_path = static_cast<uint32_t>(ExitPath::kExit);
  p.exit_status = 3;
  p.executable = b.add_string("/usr/bin/git");
  p.command_line = b.add_string(std::string("git\0repack\0-a", 13));
  b.process.push_back(p);
  ModuleRecord m{};
  m.load_bias = 0x555500000000;
  m.start = 0x555500001000;
  m.end = 0x555500100000;
  m.path = b.add_string("/usr/bin/git");
  m.build_id_size = 2;
  m.build_id[0] = 0xab;
  m.build_id[1] = 0x01;
  b.modules.push_back(m);
  ThreadRecord t{};
  t.tid = 4909;
  std::strcpy(t.name, "worker");
  t.acquisitions = 10;
  t.releases = 10;
  t.contended = 2;
  t.wait_sum_ns = 3000;
  t.wait_max_ns = 2000;
  t.wait_histogram = b.add_histogram({{LogHistogramLayout::bucket_of(1000), 1},
                                      {LogHistogramLayout::bucket_of(2000), 1}});
  b.threads.push_back(t);
  LockRecord l{};
  l.address = 0x600000108;
  l.primitive = static_cast<uint32_t>(Primitive::kMutex);
  l.kind = static_cast<uint32_t>(MutexKind::kRecursive);
  l.flags = kLockInitSeen;
  l.init_module = 0;
  l.init_offset = 0x1234;
  l.owner_changes = 4;
  b.locks.push_back(l);
  SiteRecord s{};
  s.lock_index = 0;
  s.operation = static_cast<uint16_t>(Operation::kLock);
  s.module = 0;
  s.offset = 0x2000;
  s.count = 10;
  s.contended = 2;
  s.wait_sum_ns = 3000;
  s.wait_max_ns = 2000;
  s.wait_histogram = t.wait_histogram;
  s.hold_histogram = b.add_histogram({{LogHistogramLayout::bucket_of(500), 8}});
  s.hold_samples = 1;
  b.sites.push_back(s);
  SiteRecord u{};
  u.lock_index = 0;
  u.operation = static_cast<uint16_t>(Operation::kUnlock);
  u.module = kNoModule;
  u.offset = 0x7f0000001234;
  u.count = 10;
  b.sites.push_back(u);
  b.counters.push_back(CounterRecord{static_cast<uint32_t>(Counter::kUnbalancedUnlocks), 0, 5});
  return b;
}

class ProfileReader : public ::testing::Test {
 protected:
  std::string write(const std::string& bytes) {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("lockscope-reader-" + std::to_string(getpid()) + ".lsprof"))
                                 .string();
    std::ofstream(path, std::ios::binary) << bytes;
    paths_.push_back(path);
    return path;
  }
  void TearDown() override {
    for (const auto& p : paths_) std::filesystem::remove(p);
  }
  std::vector<std::string> paths_;
};

TEST_F(ProfileReader, RoundTripsEveryField) {
  auto result = read_profile_file(write(sample_profile().bytes()));
  ASSERT_TRUE(std::holds_alternative<ProcessProfile>(result)) << std::get<std::string>(result);
  const ProcessProfile& p = std::get<ProcessProfile>(result);
  EXPECT_EQ(p.pid, 4908u);
  EXPECT_EQ(p.exit_status, 3);
  EXPECT_EQ(p.hold_sample_period, 8u);
  EXPECT_EQ(p.executable, "/usr/bin/git");
  EXPECT_EQ(p.arguments, (std::vector<std::string>{"git", "repack", "-a"}));
  ASSERT_EQ(p.modules.size(), 1u);
  EXPECT_EQ(p.modules[0].build_id_hex, "ab01");
  ASSERT_EQ(p.threads.size(), 1u);
  EXPECT_EQ(p.threads[0].name, "worker");
  EXPECT_EQ(p.threads[0].wait.total(), 10u) << "2 waits + 8 uncontended in the first bucket";
  ASSERT_EQ(p.locks.size(), 1u);
  const LockSummary& lock = p.locks[0];
  EXPECT_EQ(lock.kind, MutexKind::kRecursive);
  EXPECT_EQ(lock.init_site.offset, 0x1234u);
  EXPECT_EQ(lock.owner_changes, 4u);
  EXPECT_EQ(lock.acquisitions, 10u);
  EXPECT_EQ(lock.releases, 10u);
  EXPECT_EQ(lock.contended, 2u);
  EXPECT_EQ(lock.wait_sum_ns, 3000u);
  EXPECT_EQ(lock.hold.total(), 8u);
  EXPECT_EQ(report_buckets(lock.wait)[0], 9u);  // 8 uncontended + the 1000 ns wait
  EXPECT_EQ(report_buckets(lock.wait)[1], 1u);
  ASSERT_EQ(lock.sites.size(), 2u);
  EXPECT_EQ(lock.sites[1].location.module, kNoModule);
  EXPECT_EQ(p.counter(Counter::kUnbalancedUnlocks), 5u);
}

TEST_F(ProfileReader, NamesTruncationAtEveryLength) {
  const std::string bytes = sample_profile().bytes();
  for (size_t length = 0; length < bytes.size(); ++length) {
    auto result = read_profile_file(write(bytes.substr(0, length)));
    ASSERT_TRUE(std::holds_alternative<std::string>(result)) << length;
    const std::string& message = std::get<std::string>(result);
    EXPECT_NE(message.find("truncated"), std::string::npos) << length << ": " << message;
  }
}

TEST_F(ProfileReader, EveryFlippedByteIsCaughtOrHarmless) {
  const std::string bytes = sample_profile().bytes();
  size_t caught = 0;
  std::string uncaught_offsets;
  for (size_t at = 0; at < bytes.size(); ++at) {
    std::string damaged = bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x40);
    auto result = read_profile_file(write(damaged));
    if (std::holds_alternative<std::string>(result)) ++caught;
    else uncaught_offsets += std::to_string(at) + " ";
  }
  // Everything is covered by a CRC or a consistency check except the 4 reserved bytes of each of
  // the 9 section headers.
  EXPECT_EQ(bytes.size() - caught, 9 * sizeof(uint32_t)) << uncaught_offsets;
}

TEST_F(ProfileReader, NamesANewerVersion) {
  ProfileFileBuilder builder = sample_profile();
  builder.version = kVersion + 1;
  auto result = read_profile_file(write(builder.bytes()));
  ASSERT_TRUE(std::holds_alternative<std::string>(result));
  EXPECT_NE(std::get<std::string>(result).find("written by a newer lockscope (format version " +
                                               std::to_string(kVersion + 1)),
            std::string::npos);
}

TEST_F(ProfileReader, NamesAnOlderVersion) {
  ProfileFileBuilder builder = sample_profile();
  builder.version = kOldestReadableVersion - 1;
  auto result = read_profile_file(write(builder.bytes()));
  ASSERT_TRUE(std::holds_alternative<std::string>(result));
  EXPECT_NE(std::get<std::string>(result).find("written by an older lockscope"), std::string::npos);
}

// Version 2 had no lock order: its files read as profiles without edges.
TEST_F(ProfileReader, ReadsVersion2FilesWithoutLockOrder) {
  ProfileFileBuilder builder = sample_profile();
  builder.version = 2;
  auto result = read_profile_file(write(builder.bytes()));
  ASSERT_TRUE(std::holds_alternative<ProcessProfile>(result)) << std::get<std::string>(result);
  EXPECT_TRUE(std::get<ProcessProfile>(result).lock_order.empty());
  EXPECT_EQ(std::get<ProcessProfile>(result).locks.size(), 1u);
}

TEST_F(ProfileReader, RoundTripsLockOrderEdges) {
  ProfileFileBuilder builder = sample_profile();
  builder.locks.push_back(builder.locks[0]);
  builder.locks[1].address += 64;
  builder.order.push_back(LockOrderRecord{0, 1, 0, kNoModule, 0x2000, 0x3000, 77,
                                          static_cast<uint16_t>(Operation::kWriteLock), 0});
  auto result = read_profile_file(write(builder.bytes()));
  ASSERT_TRUE(std::holds_alternative<ProcessProfile>(result)) << std::get<std::string>(result);
  const ProcessProfile& p = std::get<ProcessProfile>(result);
  ASSERT_EQ(p.lock_order.size(), 1u);
  const LockOrderEdge& edge = p.lock_order[0];
  EXPECT_EQ(edge.from_lock, 0u);
  EXPECT_EQ(edge.to_lock, 1u);
  EXPECT_EQ(edge.from_site.module, 0u);
  EXPECT_EQ(edge.from_site.offset, 0x2000u);
  EXPECT_EQ(edge.to_site.module, kNoModule);
  EXPECT_EQ(edge.to_site.offset, 0x3000u);
  EXPECT_EQ(edge.tid, 77u);
  EXPECT_EQ(edge.to_operation, Operation::kWriteLock);

  builder.order[0].to_lock = 2;
  result = read_profile_file(write(builder.bytes()));
  ASSERT_TRUE(std::holds_alternative<std::string>(result));
  EXPECT_NE(std::get<std::string>(result).find("lock-order edge refers to a missing lock"),
            std::string::npos);
}

TEST_F(ProfileReader, RejectsReferencesOutsideTheirSections) {
  ProfileFileBuilder builder = sample_profile();
  builder.sites[0].lock_index = 7;
  auto result = read_profile_file(write(builder.bytes()));
  ASSERT_TRUE(std::holds_alternative<std::string>(result));
  EXPECT_NE(std::get<std::string>(result).find("missing lock"), std::string::npos);
  builder = sample_profile();
  builder.sites[0].wait_histogram.count = 1000;
  result = read_profile_file(write(builder.bytes()));
  ASSERT_TRUE(std::holds_alternative<std::string>(result));
  EXPECT_NE(std::get<std::string>(result).find("histogram"), std::string::npos);
}

}  // namespace
}  // namespace lockscope
