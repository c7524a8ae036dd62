// Trace files written through the runtime's own slot and key code (runtime/trace_slots.cpp) and
// read back by the report's reader (analysis/trace_reader.cpp): every event comes back with its
// time, object, site, operation and flags, across far time steps, a ring's laps, a full file and a
// full key table; and a version 1 file is still read.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "analysis/trace_reader.h"
#include "runtime/trace_writer.h"

namespace lockscope {
namespace {

using format::Operation;
using format::TraceKind;

constexpr uint64_t kStart = 1'000'000;

// TraceBuffer::supply as the runtime's: zeros written into the file ahead of the stores, at the
// offsets populate_trace asks for (a wrong one would wipe events already written).
std::string g_supplied_path;
uint64_t g_supplied_bytes = 0;
void supply_zeros(runtime::TraceBuffer&, uint64_t offset, uint64_t bytes) {
  const int fd = open(g_supplied_path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const std::vector<char> zeros(bytes);
  EXPECT_EQ(pwrite(fd, zeros.data(), bytes, static_cast<off_t>(offset)),
            static_cast<ssize_t>(bytes));
  close(fd);
  g_supplied_bytes += bytes;
}

// A trace file in a directory of its own, written through a TraceBuffer as the runtime does.
class TraceFileUnderTest {
 public:
  TraceFileUnderTest(runtime::TraceLayout layout, bool ring) {
    char dir[] = "/tmp/lockscope-trace-slots.XXXXXX";
    EXPECT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    path_ = dir_ + "/1-2.1.lstrace";
    const int fd = open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    EXPECT_GE(fd, 0);
    format::TraceHeader header{};
    header.flags = ring ? uint32_t{format::kTraceRing} : 0u;
    header.pid = 1;
    header.tid = 77;
    header.process_start_realtime_ns = 2;
    header.ticks_per_second = 1e9;
    header.ns_per_tick_q32 = uint64_t{1} << 32;
    header.start_ticks = kStart;
    header.process_start_ticks = kStart;
    EXPECT_TRUE(runtime::map_trace_file(buffer_, fd, header, layout));
    close(fd);
    g_supplied_path = path_;
    g_supplied_bytes = 0;
    buffer_.supply = supply_zeros;
  }
  ~TraceFileUnderTest() {
    runtime::forget_trace(buffer_);
    std::remove(path_.c_str());
    rmdir(dir_.c_str());
  }
  runtime::TraceBuffer& buffer() { return buffer_; }
  // Appends `event` (a thread event when its kind is one) and remembers it as expected.
  void append(const format::TraceEvent& event) {
    const auto kind = static_cast<TraceKind>(event.kind);
    if (format::is_thread_event(kind))
      runtime::append_thread_trace(buffer_, kind, event.ticks);
    else
      runtime::append_trace(buffer_, kind, event.ticks, reinterpret_cast<const void*>(event.object),
                            event.site, static_cast<Operation>(event.operation), event.value,
                            event.flags);
    written_.push_back(event);
  }
  const std::vector<format::TraceEvent>& written() const { return written_; }
  TraceFile read() const {
    auto result = read_trace_file(path_);
    if (auto* problem = std::get_if<std::string>(&result)) ADD_FAILURE() << *problem;
    return std::get<TraceFile>(std::move(result));
  }
  const std::string& path() const { return path_; }

 private:
  std::string dir_, path_;
  runtime::TraceBuffer buffer_{};
  std::vector<format::TraceEvent> written_;
};

format::TraceEvent call(uint64_t ticks, uint64_t object, uint64_t site, Operation op,
                        uint32_t generation = 0, uint8_t flags = 0,
                        TraceKind kind = TraceKind::kCall) {
  return {ticks, object, site, generation, static_cast<uint16_t>(op), static_cast<uint8_t>(kind),
          flags};
}

void expect_same(const format::TraceEvent& read, const format::TraceEvent& written, size_t i) {
  EXPECT_EQ(read.ticks, written.ticks) << "event " << i;
  EXPECT_EQ(read.object, written.object) << "event " << i;
  EXPECT_EQ(read.site, written.site) << "event " << i;
  EXPECT_EQ(read.value, written.value) << "event " << i;
  EXPECT_EQ(read.operation, written.operation) << "event " << i;
  EXPECT_EQ(read.kind, written.kind) << "event " << i;
  EXPECT_EQ(read.flags, written.flags) << "event " << i;
}

TEST(TraceSlots, EveryEventComesBackWithItsTimeKeyAndFlags) {
  TraceFileUnderTest file({1000, 64}, false);
  file.append({kStart + 5, 0, 0, 77, 0, static_cast<uint8_t>(TraceKind::kThreadStart), 0});
  uint64_t name[2] = {};
  std::memcpy(name, "worker-thread-12", 16);
  file.append(
      {kStart + 6, name[1], name[0], 77, 0, static_cast<uint8_t>(TraceKind::kThreadName), 0});
  file.append(call(kStart + 10, 0x7f0000001000, 0x401234, Operation::kLock, 3));
  file.append(call(kStart + 9, 0x7f0000001000, 0x401234, Operation::kLock, 0, 0,
                   TraceKind::kWaitBegin));  // a step back: read before the event before it
  file.append(call(kStart + 50, 0x7f0000001000, 0x401234, Operation::kLock, 3,
                   format::kTraceWaited | format::kTraceOwnerChanged));
  // Steps that do not fit 32 bits, forwards (a thread asleep for minutes) and back.
  file.append(call(kStart + (uint64_t{1} << 33), 0x7f0000001000, 0x401260, Operation::kUnlock, 3));
  file.append(call(kStart + 100, 0x7f0000002000, 0x401300, Operation::kCondSignal, 1,
                   format::kTraceNoWaiters));
  file.append(call(kStart + 101 + (uint64_t{1} << 31), 0x7f0000002000, 0x401300,
                   Operation::kCondSignal, 1, format::kTraceWithWaiters));
  file.append(
      {kStart + (uint64_t{1} << 40), 0, 0, 77, 0, static_cast<uint8_t>(TraceKind::kThreadExit), 0});
  const TraceFile read = file.read();
  ASSERT_EQ(read.events.size(), file.written().size()) << read.thread.problem;
  for (size_t i = 0; i < read.events.size(); ++i) expect_same(read.events[i], file.written()[i], i);
  EXPECT_EQ(read.thread.dropped, 0u);
  EXPECT_EQ(read.thread.overwritten, 0u);
  EXPECT_TRUE(read.thread.problem.empty()) << read.thread.problem;
  // The same key is written once: lock (generation 3), its wait's begin (0), the unlock, two
  // signals (no, then with waiters: flags are the event's), the name.
  EXPECT_EQ(file.buffer().header->keys, 5u);
  EXPECT_EQ(file.buffer().header->anchors, 4u);  // each far step
}

TEST(TraceSlots, ARingKeepsItsLastEventsEachWithItsTime) {
  constexpr uint64_t kSlots = 1500;  // not a multiple of the anchors' 512
  TraceFileUnderTest file({kSlots, 64}, true);
  constexpr int kEvents = 20000;
  uint64_t ticks = kStart;
  for (int i = 0; i < kEvents; ++i) {
    ticks += 1 + (i * 7919) % 1000;
    file.append(call(ticks, 0x5000 + (i % 3) * 64, 0x400000 + (i % 5) * 16,
                     i % 2 ? Operation::kUnlock : Operation::kLock, 1));
  }
  const TraceFile read = file.read();
  EXPECT_TRUE(read.thread.problem.empty()) << read.thread.problem;
  // The window is the last 1,500 slots, a few of them anchors; its events before its first anchor
  // have no time to count from, and count as overwritten: at most one anchor's interval.
  ASSERT_GT(read.events.size(), kSlots - 2 * format::kTraceAnchorEvery);
  ASSERT_LE(read.events.size(), kSlots);
  EXPECT_EQ(read.events.size() + read.thread.overwritten, static_cast<uint64_t>(kEvents));
  const size_t first = kEvents - read.events.size();
  for (size_t i = 0; i < read.events.size(); ++i)
    expect_same(read.events[i], file.written()[first + i], first + i);
}

// A ring's file shorter than its header says (damaged): named, never read out of bounds.
TEST(TraceSlots, AShortRingFileIsNamedAndNotRead) {
  TraceFileUnderTest file({100, 64}, true);
  for (int i = 0; i < 300; ++i) file.append(call(kStart + i, 0x5000, 0x400000, Operation::kLock));
  const uint64_t events_offset = file.buffer().header->events_offset;
  ASSERT_EQ(truncate(file.path().c_str(), static_cast<off_t>(events_offset + 80)), 0);
  const TraceFile read = file.read();
  EXPECT_TRUE(read.events.empty());
  EXPECT_NE(read.thread.problem.find("missing"), std::string::npos) << read.thread.problem;
}

TEST(TraceSlots, AFullFileAndAFullKeyTableDropAndCountTheRest) {
  {
    TraceFileUnderTest file({64, 64}, false);
    for (int i = 0; i < 100; ++i) file.append(call(kStart + i, 0x5000, 0x400000, Operation::kLock));
    const TraceFile read = file.read();
    EXPECT_EQ(read.events.size(), 64u);
    EXPECT_EQ(read.thread.dropped, 36u);
    for (size_t i = 0; i < read.events.size(); ++i)
      expect_same(read.events[i], file.written()[i], i);
  }
  {
    TraceFileUnderTest file({1000, 64}, false);
    for (int i = 0; i < 70; ++i)
      file.append(call(kStart + i, 0x5000 + i, 0x400000, Operation::kLock));
    file.append(call(kStart + 80, 0x5000, 0x400000, Operation::kLock));  // a key it has
    const TraceFile read = file.read();
    ASSERT_EQ(read.events.size(), 65u);
    EXPECT_EQ(read.thread.dropped, 6u);
    EXPECT_EQ(file.buffer().header->dropped_no_key, 6u);
    expect_same(read.events.back(), file.written().back(), 70);
  }
}

TEST(TraceSlots, PagesWrittenAheadNeverWipeAnEvent) {
  constexpr uint64_t kSlots = 400000;  // 3.2 MB: 64 KiB steps, then 256 KiB ones
  TraceFileUnderTest file({kSlots, 64}, false);
  for (uint64_t i = 0; i + 1 < kSlots; ++i)
    file.append(call(kStart + i * 3, 0x5000 + (i % 4) * 64, 0x400000, Operation::kLock, 1));
  // Each page once, past the first MiB (a short thread's pages are not written ahead).
  EXPECT_EQ(g_supplied_bytes, kSlots * sizeof(uint64_t) - (1u << 20));
  const TraceFile read = file.read();
  ASSERT_EQ(read.events.size(), kSlots - 1);
  for (size_t i = 0; i < read.events.size(); ++i) {
    expect_same(read.events[i], file.written()[i], i);
    if (HasFailure()) break;
  }
}

TEST(TraceSlots, TheKeyIndexGrowsAndFindsEveryKey) {
  TraceFileUnderTest file({40000, 20000}, false);
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < 15000; ++i)
      file.append(call(kStart + round * 15000 + i, 0x10000 + uint64_t(i) * 64, 0x400000 + (i % 7),
                       Operation::kLock, 1));
  EXPECT_EQ(file.buffer().header->keys, 15000u);
  // The key table's pages were made writable as it filled (a misaligned step once stopped that
  // after 2,730 keys, leaving later keys to a SIGBUS on a full disk).
  EXPECT_GE(file.buffer().keys_populated, 15000u);
  EXPECT_LT(file.buffer().keys_populated, 15000u + 65536 / sizeof(format::TraceKey));
  EXPECT_GE(file.buffer().index_mask + 1, 4u * 15000);
  const TraceFile read = file.read();
  ASSERT_EQ(read.events.size(), 30000u);
  for (size_t i = 0; i < read.events.size(); ++i) expect_same(read.events[i], file.written()[i], i);
}

TEST(TraceSlots, AVersionOneFileIsStillRead) {
  char dir[] = "/tmp/lockscope-trace-v1.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/1-2.1.lstrace";
  std::vector<char> bytes(format::kTraceHeaderSize + 4 * sizeof(format::TraceEvent));
  format::TraceHeader header{};
  std::memcpy(header.magic, format::kTraceMagic, sizeof(header.magic));
  header.version = format::kTraceVersion1;
  header.header_size = format::kTraceHeaderSize;
  header.event_size = sizeof(format::TraceEvent);
  header.capacity = 4;
  header.pid = 1;
  header.tid = 5;
  header.ticks_per_second = 1e9;
  header.ns_per_tick_q32 = uint64_t{1} << 32;
  header.written = 3;
  std::memcpy(bytes.data(), &header, format::kTraceHeaderV1Size);  // a version 1 header's size
  const format::TraceEvent events[3] = {
      {10, 0, 0, 5, 0, static_cast<uint8_t>(TraceKind::kThreadStart), 0},
      call(20, 0x5000, 0x401000, Operation::kLock, 1),
      call(30, 0x5000, 0x401010, Operation::kUnlock, 1)};
  std::memcpy(bytes.data() + format::kTraceHeaderSize, events, sizeof(events));
  FILE* out = std::fopen(path.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  std::fwrite(bytes.data(), 1, bytes.size(), out);
  std::fclose(out);
  auto result = read_trace_file(path);
  std::remove(path.c_str());
  rmdir(dir);
  ASSERT_TRUE(std::holds_alternative<TraceFile>(result)) << std::get<std::string>(result);
  const TraceFile& read = std::get<TraceFile>(result);
  ASSERT_EQ(read.events.size(), 3u);
  for (size_t i = 0; i < 3; ++i) expect_same(read.events[i], events[i], i);
  EXPECT_EQ(read.thread.tid, 5u);
}

}  // namespace
}  // namespace lockscope
