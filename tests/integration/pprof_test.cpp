// The pprof export of a real profile read by the real consumers: protoc decodes the gunzipped file
// with pprof's own profile.proto, and `go tool pprof` (Debian's golang-go) prints its samples,
// locations and traces. Both must show the JSON report's lock-wait (hold) totals exactly and the
// wrapped_locks fixture's frames, innermost first, at the lines of their calls.
// scripts/install-dependencies.sh installs both tools: a missing one fails the test.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

using nlohmann::json;

struct LockTotals {
  uint64_t count = 0;  // contended acquisitions, or acquisitions for holds
  uint64_t sum_ns = 0;
};

// The JSON report's totals over every process's mutexes and rwlocks: what pprof's samples add up
// to.
LockTotals json_totals(const std::string& directory, const char* what) {
  const CommandResult run = run_lockscope({"report", directory, "-f", "json"});
  EXPECT_EQ(run.exit_status, 0) << run.err;
  LockTotals totals;
  const json report = json::parse(run.out);
  for (const json& process : report["processes"])
    for (const json& lock : process["locks"])
      if (lock["primitive"] == "mutex" || lock["primitive"] == "rwlock") {
        totals.count +=
            lock[std::string(what) == "wait" ? "contended" : "acquisitions"].get<uint64_t>();
        totals.sum_ns += lock[what]["sum_ns"].get<uint64_t>();
      }
  return totals;
}

std::string write_pprof(const TemporaryDirectory& dir, const std::string& name,
                        const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"report", dir.path(), "-o", dir / name};
  args.insert(args.end(), extra.begin(), extra.end());
  const CommandResult run = run_lockscope(args);
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_TRUE(run.out.empty());
  return dir / name;
}

std::string quoted(const std::string& path) {
  return "'" + path + "'";
}

// protoc's text format of the gunzipped file, decoded by pprof's profile.proto.
std::string protoc_decoded(const std::string& file) {
  const std::string proto = PPROF_PROTO;
  const std::string directory = proto.substr(0, proto.rfind('/'));
  const CommandResult run = run_command(
      {"/bin/sh", "-c",
       fmt::format("gzip -dc {0} > {0}.raw && {1} --decode=perftools.profiles.Profile -I {2} {3} < "
                   "{0}.raw",
                   quoted(file), quoted(PROTOC), quoted(directory), quoted(proto))});
  EXPECT_EQ(run.exit_status, 0) << run.err;
  return run.out;
}

// What the text format says: the string table, the sample types, and each value's sum.
struct DecodedProfile {
  std::vector<std::string> strings;
  std::vector<std::pair<int, int>> sample_types;  // string indexes of type and unit
  std::map<size_t, uint64_t> value_sums;          // by position in the samples' values
  size_t samples = 0;
  std::string sample_type(size_t i) const {
    return strings.at(sample_types.at(i).first) + "/" + strings.at(sample_types.at(i).second);
  }
};

// protoc prints a string as a C literal; the fixture's strings need no more than \" and \\.
std::string unquoted(const std::string& literal) {
  std::string out;
  for (size_t i = 1; i + 1 < literal.size(); ++i)
    out += literal[i] == '\\' ? literal[++i] : literal[i];
  return out;
}

DecodedProfile parse_text_format(const std::string& text) {
  DecodedProfile decoded;
  std::istringstream in(text);
  std::vector<std::string> blocks;  // the enclosing messages' field names
  size_t value_index = 0;
  for (std::string line; std::getline(in, line);) {
    line.erase(0, line.find_first_not_of(' '));
    if (line.ends_with(" {")) {
      blocks.push_back(line.substr(0, line.size() - 2));
      if (blocks.size() == 1 && blocks[0] == "sample") ++decoded.samples, value_index = 0;
      if (blocks.size() == 1 && blocks[0] == "sample_type") decoded.sample_types.emplace_back();
      continue;
    }
    if (line == "}") {
      blocks.pop_back();
      continue;
    }
    const size_t colon = line.find(": ");
    if (colon == std::string::npos) continue;
    const std::string field = line.substr(0, colon), value = line.substr(colon + 2);
    if (blocks.empty() && field == "string_table") decoded.strings.push_back(unquoted(value));
    if (blocks.size() == 1 && blocks[0] == "sample" && field == "value")
      decoded.value_sums[value_index++] += std::stoull(value);
    if (blocks.size() == 1 && blocks[0] == "sample_type" && field == "type")
      decoded.sample_types.back().first = std::stoi(value);
    if (blocks.size() == 1 && blocks[0] == "sample_type" && field == "unit")
      decoded.sample_types.back().second = std::stoi(value);
  }
  return decoded;
}

TEST(Pprof, ProtocDecodesGoMutexProfileSampleTypesAddingUpToTheJsonTotals) {
  TemporaryDirectory dir;
  record_unchanged(dir, "wrapped_locks", {"100"});
  for (const bool hold : {false, true}) {
    const std::string file = write_pprof(
        dir, hold ? "holds.pprof" : "waits.pb.gz",
        hold ? std::vector<std::string>{"--weight", "hold"} : std::vector<std::string>{});
    const std::string text = protoc_decoded(file);
    const DecodedProfile decoded = parse_text_format(text);
    ASSERT_FALSE(decoded.strings.empty()) << text;
    EXPECT_EQ(decoded.strings[0], "");
    ASSERT_EQ(decoded.sample_types.size(), 2u) << text;
    EXPECT_EQ(decoded.sample_type(0), hold ? "holds/count" : "contentions/count");
    EXPECT_EQ(decoded.sample_type(1), hold ? "hold/nanoseconds" : "delay/nanoseconds");
    const LockTotals expected = json_totals(dir.path(), hold ? "hold" : "wait");
    EXPECT_GT(decoded.samples, 0u);
    EXPECT_EQ(decoded.value_sums.at(0), expected.count) << (hold ? "holds" : "contentions");
    EXPECT_EQ(decoded.value_sums.at(1), expected.sum_ns) << (hold ? "hold" : "delay");
    EXPECT_GT(expected.sum_ns, 0u);
    for (const char* needle : {"time_nanos: ", "duration_nanos: ", "period: 1"})
      EXPECT_NE(text.find(needle), std::string::npos) << needle;
  }
}

CommandResult go_pprof(const std::vector<std::string>& args) {
  std::vector<std::string> command = {"/usr/bin/env", "go", "tool", "pprof"};
  command.insert(command.end(), args.begin(), args.end());
  CommandResult run = run_command(command);
  EXPECT_EQ(run.exit_status, 0) << "go tool pprof (Debian's golang-go, which "
                                   "scripts/install-dependencies.sh installs): "
                                << run.err;
  return run;
}

// The fixture's frames as pprof prints a location's lines: "function file:line".
std::vector<std::string> wrapped_locks_frames() {
  const std::string source = fixture_source("wrapped_locks");
  std::vector<std::string> frames;
  for (const auto& [function, marker] :
       std::vector<std::pair<std::string, std::string>>{{"take_and_work", "level3"},
                                                        {"with_lock", "level2"},
                                                        {"guarded_update", "level1"},
                                                        {"worker", "worker"}})
    frames.push_back(
        fmt::format("{} {}:{}", function, source, marker_line("wrapped_locks", marker)));
  return frames;
}

// -raw: pprof's own reading of every sample (their values add up to the JSON totals) and
// location (the fixture's functions at the lines of their calls, with no symbol lookup of its own).
TEST(Pprof, GoToolPprofReadsTheSamplesAndTheFixturesFramesRaw) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "wrapped_locks", {"100"});
  const std::string file = write_pprof(dir, "waits.pb.gz");
  const CommandResult raw = go_pprof({"-raw", file});
  EXPECT_NE(raw.out.find("PeriodType: contentions count\n"), std::string::npos) << raw.out;
  EXPECT_NE(raw.out.find("contentions/count delay/nanoseconds[dflt]\n"), std::string::npos)
      << raw.out;
  const size_t samples = raw.out.find("Samples:\n"), locations = raw.out.find("\nLocations\n");
  ASSERT_NE(samples, std::string::npos) << raw.out;
  ASSERT_NE(locations, std::string::npos) << raw.out;
  uint64_t count = 0, delay = 0;
  std::istringstream lines(raw.out.substr(samples, locations - samples));
  for (std::string line; std::getline(lines, line);) {
    if (line.find(": ") == std::string::npos || line.find('[') != std::string::npos) continue;
    std::istringstream values(line);
    uint64_t contentions = 0, nanoseconds = 0;
    if (values >> contentions >> nanoseconds) count += contentions, delay += nanoseconds;
  }
  const LockTotals expected = json_totals(dir.path(), "wait");
  EXPECT_EQ(count, expected.count);
  EXPECT_EQ(delay, expected.sum_ns);
  const std::string locations_text = raw.out.substr(locations);
  for (const std::string& frame : wrapped_locks_frames())
    EXPECT_NE(locations_text.find(frame), std::string::npos) << frame << " not in\n"
                                                             << locations_text;
  const FoundSite wait = find_site(process, "wrapped_locks", "level3", format::Operation::kLock);
  ASSERT_NE(wait.lock, nullptr);
  // The lock label is its name (a global: its symbol), the address a label of its own.
  EXPECT_EQ(wait.lock->name, "shared");
  EXPECT_NE(raw.out.find("lock:[shared]"), std::string::npos) << raw.out;
  EXPECT_NE(raw.out.find(fmt::format("lock_address:[0x{:x}]", wait.lock->address)),
            std::string::npos);
  EXPECT_NE(raw.out.find(fmt::format("process:[pid {} (fixture_wrapped_locks)]", process.pid)),
            std::string::npos);
  EXPECT_NE(raw.out.find(fmt::format("pid:[{}]", process.pid)), std::string::npos);
}

// -traces: each stack leaf first, through the three wrappers to the thread function; -top: the
// delay total, in nanoseconds, equal to the JSON report's.
TEST(Pprof, GoToolPprofTracesAndTopShowTheWaitsThroughTheWrappers) {
  TemporaryDirectory dir;
  record_unchanged(dir, "wrapped_locks", {"100"});
  const std::string file = write_pprof(dir, "waits.pb.gz");
  const CommandResult traces = go_pprof({"-traces", "-lines", file});
  std::vector<std::string> frames = wrapped_locks_frames();
  for (std::string& frame : frames) frame = frame.substr(0, frame.find(' '));
  size_t through_wrappers = 0;
  std::istringstream blocks(traces.out);
  std::string block, line;
  auto check_block = [&] {
    size_t at = block.find(frames[0] + " ");
    if (at == std::string::npos) return;
    // A wait whose stack was not captured (the capture budget) stands on its call site alone.
    const size_t end_of_site = block.find('\n', at);
    if (end_of_site == std::string::npos || end_of_site + 1 >= block.size()) return;
    ++through_wrappers;
    for (size_t i = 1; i < frames.size(); ++i) {
      const size_t next = block.find("  " + frames[i] + " ", at);
      EXPECT_NE(next, std::string::npos) << frames[i] << " not after " << frames[i - 1] << " in\n"
                                         << block;
      at = next == std::string::npos ? at : next;
    }
  };
  while (std::getline(blocks, line)) {
    if (line.rfind("-----", 0) == 0)
      check_block(), block.clear();
    else
      block += line + "\n";
  }
  check_block();
  EXPECT_GT(through_wrappers, 0u) << traces.out;

  const CommandResult top = go_pprof({"-top", "-sample_index=delay", "-unit=ns", file});
  const uint64_t total = json_totals(dir.path(), "wait").sum_ns;
  EXPECT_NE(top.out.find(fmt::format("of {}ns total", total)), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("take_and_work"), std::string::npos) << top.out;
}

}  // namespace
}  // namespace lockscope::testing
