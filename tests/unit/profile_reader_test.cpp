// The reader against files built here field by field (round trip), and against every kind of
// damage: each truncation length and each flipped byte must give an error message or a valid
// profile, never a crash.
#include "analysis/profile_reader.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>

#include "common/log_histogram.h"
#include "common/profile_format.h"
#include "profile_file_builder.h"

namespace lockscope {
namespace {

using namespace format;

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
  t.wait_histogram = b.add_histogram(
      {{LogHistogramLayout::bucket_of(1000), 1}, {LogHistogramLayout::bucket_of(2000), 1}});
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
  s.wait_histogram = b.add_histogram(
      {{LogHistogramLayout::bucket_of(1000), 1}, {LogHistogramLayout::bucket_of(2000), 1}});
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
  // Empty: a file kept open to be written at the end, by a process that never got there.
  auto empty = read_profile_file(write(""));
  ASSERT_TRUE(std::holds_alternative<std::string>(empty));
  EXPECT_NE(
      std::get<std::string>(empty).find("empty: the process ended without writing its profile"),
      std::string::npos)
      << std::get<std::string>(empty);
  for (size_t length = 1; length < bytes.size(); ++length) {
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
    if (std::holds_alternative<std::string>(result))
      ++caught;
    else
      uncaught_offsets += std::to_string(at) + " ";
  }
  // Everything is covered by a CRC or a consistency check except the 4 reserved bytes of each of
  // the 9 section headers, and the counters section's type: flipped, it is a type this reader
  // does not know, skipped, and the counters (optional) are 0.
  EXPECT_EQ(bytes.size() - caught, 9 * sizeof(uint32_t) + sizeof(uint32_t)) << uncaught_offsets;
}

// A newer writer's section type is skipped (after its checks) and counted; the counters section
// is optional, as the format doc says; a known section twice is refused.
TEST_F(ProfileReader, SkipsSectionTypesItDoesNotKnow) {
  ProfileFileBuilder builder = sample_profile();
  builder.extra_sections.push_back({1000, 4, std::string(12, 'x')});
  builder.extra_sections.push_back({1001, 1, "abc"});
  auto result = read_profile_file(write(builder.bytes()));
  ASSERT_TRUE(std::holds_alternative<ProcessProfile>(result)) << std::get<std::string>(result);
  EXPECT_EQ(std::get<ProcessProfile>(result).unknown_sections, 2u);
  EXPECT_EQ(std::get<ProcessProfile>(result).locks.size(), 1u);
  EXPECT_EQ(std::get<ProcessProfile>(result).counter(Counter::kUnbalancedUnlocks), 5u);

  builder.extra_sections = {{1000, 4, std::string(13, 'x')}};  // 13 bytes of 4-byte records
  result = read_profile_file(write(builder.bytes()));
  ASSERT_TRUE(std::holds_alternative<std::string>(result));
  EXPECT_EQ(std::get<std::string>(result), "section 'type 1000' has inconsistent sizes");
}

TEST_F(ProfileReader, ReadsAFileWithoutTheCountersSection) {
  ProfileFileBuilder builder = sample_profile();
  builder.with_counters = false;
  auto result = read_profile_file(write(builder.bytes()));
  ASSERT_TRUE(std::holds_alternative<ProcessProfile>(result)) << std::get<std::string>(result);
  EXPECT_TRUE(std::get<ProcessProfile>(result).counters.empty());
  EXPECT_EQ(std::get<ProcessProfile>(result).unknown_sections, 0u);
}

TEST_F(ProfileReader, RefusesAKnownSectionTwice) {
  ProfileFileBuilder builder = sample_profile();
  builder.extra_sections.push_back({static_cast<uint32_t>(SectionType::kCounters),
                                    sizeof(CounterRecord),
                                    std::string(sizeof(CounterRecord), '\0')});
  auto result = read_profile_file(write(builder.bytes()));
  ASSERT_TRUE(std::holds_alternative<std::string>(result));
  EXPECT_EQ(std::get<std::string>(result), "section 'counters' appears twice");
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

// A file that is not a profile's kind of file is named for what it is, at once: a directory, a
// FIFO (whose open() used to wait for a writer for ever), a device. A symlink to a regular
// profile still reads.
class ProfileReaderFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("lockscope-reader-files-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // The reader's answer for `file`, or a failed test when it does not come within 10 s (a FIFO
  // is then opened for writing, which lets a reader blocked in open() go on).
  std::string problem_of(const std::string& file) {
    auto answer = std::async(std::launch::async, [file] { return read_profile_file(file); });
    if (answer.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
      ADD_FAILURE() << file << ": the reader still waits after 10 s";
      const int unblock = open(file.c_str(), O_WRONLY | O_NONBLOCK);
      if (unblock >= 0) close(unblock);
    }
    auto result = answer.get();
    if (std::holds_alternative<ProcessProfile>(result)) return "read as a profile";
    return std::get<std::string>(result);
  }
  std::filesystem::path dir_;
};

TEST_F(ProfileReaderFiles, ADirectoryIsNamedAsOne) {
  std::filesystem::create_directory(path("d.lsprof"));
  EXPECT_EQ(problem_of(path("d.lsprof")), "not a regular file (a directory)");
}

TEST_F(ProfileReaderFiles, AFifoIsRefusedWithoutWaitingForAWriter) {
  ASSERT_EQ(mkfifo(path("f.lsprof").c_str(), 0600), 0) << std::strerror(errno);
  EXPECT_EQ(problem_of(path("f.lsprof")), "not a regular file (a FIFO)");
}

TEST_F(ProfileReaderFiles, ASymlinkToADeviceIsRefusedASymlinkToAProfileRead) {
  std::filesystem::create_symlink("/dev/zero", path("zero.lsprof"));
  EXPECT_EQ(problem_of(path("zero.lsprof")), "not a regular file (a character device)");
  std::ofstream(path("real.bin"), std::ios::binary) << sample_profile().bytes();
  std::filesystem::create_symlink(path("real.bin"), path("link.lsprof"));
  EXPECT_EQ(problem_of(path("link.lsprof")), "read as a profile");
}

TEST_F(ProfileReaderFiles, AFileLargerThanAProfileCanBeIsNotRead) {
  {  // sparse: no disk space, and a reader that read it whole would need 4 GiB of memory
    std::ofstream(path("huge.lsprof"), std::ios::binary) << sample_profile().bytes();
  }
  std::filesystem::resize_file(path("huge.lsprof"), kMaxProfileFileBytes + 1);
  const std::string problem = problem_of(path("huge.lsprof"));
  EXPECT_EQ(problem, std::to_string(kMaxProfileFileBytes + 1) +
                         " bytes, more than a profile can be (4 GiB): not a profile, or damaged");
}

TEST_F(ProfileReaderFiles, ADirectoryReportsEveryOtherFile) {
  std::ofstream(path("1-1.lsprof"), std::ios::binary) << sample_profile().bytes();
  std::filesystem::create_directory(path("2-2.lsprof"));
  ASSERT_EQ(mkfifo(path("3-3.lsprof").c_str(), 0600), 0);
  std::filesystem::create_symlink("/dev/zero", path("4-4.lsprof"));
  auto answer = std::async(std::launch::async, [this] { return read_profile_directory(dir_); });
  ASSERT_EQ(answer.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "the directory's FIFO blocks the reader";
  const Profile profile = answer.get();
  ASSERT_EQ(profile.processes.size(), 1u);
  EXPECT_EQ(profile.processes[0].pid, 4908u);
  ASSERT_EQ(profile.problems.size(), 3u);
  EXPECT_EQ(profile.problems[0].message, "not a regular file (a directory)");
  EXPECT_EQ(profile.problems[1].message, "not a regular file (a FIFO)");
  EXPECT_EQ(profile.problems[2].message, "not a regular file (a character device)");
}

// Each histogram, stack and string of a file has a run of records of its own. References that
// overlap (every site claiming the whole histograms section) cost the section's size per
// reference: quadratic time and memory, so they are a damaged file.
TEST_F(ProfileReader, RejectsOverlappingReferences) {
  const auto problem = [this](const ProfileFileBuilder& builder) {
    auto result = read_profile_file(write(builder.bytes()));
    if (std::holds_alternative<ProcessProfile>(result)) return std::string("read as a profile");
    return std::get<std::string>(result);
  };
  const std::string overlap = " overlap (together they claim more than the section holds)";
  ProfileFileBuilder histograms = sample_profile();
  histograms.sites[1].wait_histogram = histograms.sites[0].wait_histogram;
  EXPECT_EQ(problem(histograms), "histogram references" + overlap);
  ProfileFileBuilder strings = sample_profile();
  strings.modules.push_back(strings.modules[0]);  // a second module, the same path's bytes
  EXPECT_EQ(problem(strings), "string references" + overlap);
  ProfileFileBuilder stacks = sample_profile();
  stacks.frames = {StackFrameRecord{0, 0, 0x2000}, StackFrameRecord{0, 0, 0x3000}};
  stacks.stacks = {StackRecord{0, 2}};
  EXPECT_EQ(problem(stacks), "read as a profile");
  stacks.stacks = {StackRecord{0, 2}, StackRecord{0, 2}};
  EXPECT_EQ(problem(stacks), "stack frame references" + overlap);
}

}  // namespace
}  // namespace lockscope

namespace lockscope {
namespace {

// Version 4: the exec'd name is followed by the file found and why it was not profiled; a
// version-3 file has the name alone (what follows it is another string), and a version-4 file
// whose name ends the section keeps the name.
TEST_F(ProfileReader, ReadsAnExecVerdictFromVersion4Only) {
  const std::string verdict("prog\0/opt/bin/prog\0/opt/bin/prog is statically linked\0", 54);
  auto read = [&, this](uint32_t version, const std::string& strings) {
    ProfileFileBuilder builder = sample_profile();
    builder.version = version;
    builder.process[0].exit_path = static_cast<uint32_t>(ExitPath::kExec);
    builder.process[0].exec_target = builder.add_string(strings).offset + 1;
    const auto result = read_profile_file(write(builder.bytes()));
    EXPECT_TRUE(std::holds_alternative<ProcessProfile>(result)) << std::get<std::string>(result);
    return std::holds_alternative<ProcessProfile>(result) ? std::get<ProcessProfile>(result)
                                                          : ProcessProfile{};
  };
  ProcessProfile v4 = read(4, verdict);
  EXPECT_EQ(v4.exec_target, "prog");
  EXPECT_EQ(v4.exec_resolved, "/opt/bin/prog");
  EXPECT_EQ(v4.exec_unprofilable, "/opt/bin/prog is statically linked");
  ProcessProfile v3 = read(3, verdict);
  EXPECT_EQ(v3.exec_target, "prog");
  EXPECT_EQ(v3.exec_resolved, "");
  EXPECT_EQ(v3.exec_unprofilable, "");
  ProcessProfile cut = read(4, std::string("prog\0", 5));
  EXPECT_EQ(cut.exec_target, "prog");
  EXPECT_EQ(cut.exec_resolved, "");
  ProcessProfile unterminated = read(4, std::string("prog\0/opt/bin/pr", 16));
  EXPECT_EQ(unterminated.exec_target, "prog");
  EXPECT_EQ(unterminated.exec_resolved, "") << "a string without its NUL is not read";
}

}  // namespace
}  // namespace lockscope
