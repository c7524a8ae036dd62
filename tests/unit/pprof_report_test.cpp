// The pprof writer on a hand-built profile, read back by libprotobuf from the gunzipped file:
// Go's mutex-profile sample types, samples adding up to the wait (hold) totals, locations
// innermost first with an inlined function as a line of its location, one mapping per module, and
// the labels; and `go tool pprof -raw` reading the inlined function where profile.proto puts it
// (the fixtures of tests/integration/pprof_test.cpp inline nothing).
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "code_locations.h"
#include "one_mutex_profile.h"
#include "profile.pb.h"
#include "report/report_writer.h"

namespace lockscope {
namespace {

namespace pb = perftools::profiles;

std::string gunzipped(const std::string& bytes) {
  z_stream stream{};
  EXPECT_EQ(inflateInit2(&stream, 16 + MAX_WBITS), Z_OK);  // 16: a gzip stream, not zlib's
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  std::string out;
  char buffer[4096];
  int result = Z_OK;
  while (result == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof buffer;
    result = inflate(&stream, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - stream.avail_out);
  }
  inflateEnd(&stream);
  EXPECT_EQ(result, Z_STREAM_END) << "not one whole gzip stream";
  return out;
}

// one_mutex_profile's, its call site Map::at inlined into lookup, in a module of its own; the
// lock's address reused once (generation 2).
Profile inlined_profile() {
  CodeLocation take = code_location("Map<int>::at(int) const", "src/map.h", 10);
  take.inlined_from = {"lookup src/map.cc:15"};
  Profile profile = one_mutex_profile(take, code_location("main", "src/map.cc", 20));
  ProcessProfile& process = profile.processes[0];
  process.start_realtime_ns = 5'000'000'000;
  process.duration_ns = 2'000'000;
  process.modules = {
      ModuleSummary{"/opt/cache", "abcd01", 0x550000000000, 0x550000001000, 0x550000009000}};
  process.locks[0].generation = 2;
  return profile;
}

pb::Profile pprof_of(const Profile& profile, StackWeight weight = StackWeight::kWait) {
  ReportOptions options;
  options.weight = weight;
  std::ostringstream out;
  make_report_writer("pprof")->write(profile, options, out);
  pb::Profile decoded;
  EXPECT_TRUE(decoded.ParseFromString(gunzipped(out.str())));
  return decoded;
}

std::string value_type(const pb::Profile& p, const pb::ValueType& type) {
  return p.string_table(type.type()) + "/" + p.string_table(type.unit());
}

std::map<std::string, std::string> labels(const pb::Profile& p, const pb::Sample& sample) {
  std::map<std::string, std::string> out;
  for (const pb::Label& label : sample.label())
    out[p.string_table(label.key())] =
        label.str() ? p.string_table(label.str()) : std::to_string(label.num());
  return out;
}

TEST(PprofReport, GoMutexProfileShapeAddingUpToTheWaitTotal) {
  const pb::Profile p = pprof_of(inlined_profile());
  ASSERT_EQ(p.string_table(0), "");
  ASSERT_EQ(p.sample_type_size(), 2);
  EXPECT_EQ(value_type(p, p.sample_type(0)), "contentions/count");
  EXPECT_EQ(value_type(p, p.sample_type(1)), "delay/nanoseconds");
  EXPECT_EQ(value_type(p, p.period_type()), "contentions/count");
  EXPECT_EQ(p.period(), 1);
  EXPECT_EQ(p.string_table(p.default_sample_type()), "delay");
  EXPECT_EQ(p.time_nanos(), 5'000'000'000);
  EXPECT_EQ(p.duration_nanos(), 2'000'000);
  ASSERT_EQ(p.sample_size(), 2);
  EXPECT_EQ(p.sample(0).value(0) + p.sample(1).value(0), 3);  // contended
  EXPECT_EQ(p.sample(0).value(1), 600);
  EXPECT_EQ(p.sample(1).value(1), 300);
  const std::map<std::string, std::string> expected = {{"pid", "7"},
                                                       {"process", "pid 7 (cache)"},
                                                       // not symbolized: named by its address
                                                       {"lock", "0xfeed"},
                                                       {"lock_address", "0xfeed#2"},
                                                       {"lock_kind", "mutex"},
                                                       {"operation", "lock"}};
  // The sample whose stack was not captured (its call site alone) says so.
  std::map<std::string, std::string> not_captured = expected;
  not_captured["stack"] = "not captured";
  EXPECT_EQ(labels(p, p.sample(0)), expected);
  EXPECT_EQ(labels(p, p.sample(1)), not_captured);
}

TEST(PprofReport, InlinedFunctionsAreLinesOfOneLocationInnermostFirst) {
  const pb::Profile p = pprof_of(inlined_profile());
  std::map<uint64_t, const pb::Location*> locations;
  for (const pb::Location& location : p.location()) locations[location.id()] = &location;
  std::map<uint64_t, const pb::Function*> functions;
  for (const pb::Function& function : p.function()) functions[function.id()] = &function;
  auto line_text = [&](const pb::Line& line) {
    const pb::Function& function = *functions.at(line.function_id());
    return p.string_table(function.name()) + " " + p.string_table(function.filename()) + ":" +
           std::to_string(line.line());
  };
  const pb::Sample& stack = p.sample(0);
  ASSERT_EQ(stack.location_id_size(), 2);  // the call site (Map::at in lookup), then main
  const pb::Location& site = *locations.at(stack.location_id(0));
  ASSERT_EQ(site.line_size(), 2);
  EXPECT_EQ(line_text(site.line(0)), "Map<int>::at src/map.h:10");
  EXPECT_EQ(line_text(site.line(1)), "lookup src/map.cc:15");
  EXPECT_EQ(p.string_table(functions.at(site.line(0).function_id())->system_name()),
            "Map<int>::at(int) const");
  // The call instruction: the return address (bias + offset 0x1000 + 10) less one.
  EXPECT_EQ(site.address(), 0x550000000000u + 0x1000 + 10 - 1);
  const pb::Location& main = *locations.at(stack.location_id(1));
  ASSERT_EQ(main.line_size(), 1);
  EXPECT_EQ(line_text(main.line(0)), "main src/map.cc:20");
  // The sample without a stack shares the call site's location.
  ASSERT_EQ(p.sample(1).location_id_size(), 1);
  EXPECT_EQ(p.sample(1).location_id(0), site.id());
  ASSERT_EQ(p.mapping_size(), 1);
  const pb::Mapping& mapping = p.mapping(0);
  EXPECT_EQ(site.mapping_id(), mapping.id());
  EXPECT_EQ(main.mapping_id(), mapping.id());
  EXPECT_EQ(p.string_table(mapping.filename()), "/opt/cache");
  EXPECT_EQ(p.string_table(mapping.build_id()), "abcd01");
  EXPECT_EQ(mapping.memory_start(), 0x550000001000u);
  EXPECT_EQ(mapping.memory_limit(), 0x550000009000u);
  EXPECT_TRUE(mapping.has_functions() && mapping.has_inline_frames());
}

// pprof itself reads the inlined function as the second line of the call site's location (a
// missing `go`, which scripts/install-dependencies.sh installs, fails the test).
TEST(PprofReport, GoToolPprofReadsTheInlinedFunctionInsideItsLocation) {
  char directory[] = "/tmp/lockscope-pprof-XXXXXX";
  ASSERT_NE(mkdtemp(directory), nullptr);
  const std::string file = std::string(directory) + "/inlined.pb.gz";
  {
    ReportSink sink(file);
    make_report_writer("pprof")->write(inlined_profile(), ReportOptions{}, sink);
    sink.finish();
  }
  FILE* pipe = popen(("go tool pprof -raw " + file + " 2>&1").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = pclose(pipe);
  std::filesystem::remove_all(directory);
  ASSERT_EQ(status, 0) << out;
  // "     1: 0x55000000100a M=1 Map<int>::at src/map.h:10 s=0(Map<int>::at(int) const)", then
  // the inlined-into function on the location's next line.
  const size_t site = out.find(" M=1 Map<int>::at src/map.h:10 s=0(Map<int>::at(int) const)\n");
  ASSERT_NE(site, std::string::npos) << out;
  const size_t next_line = out.find('\n', site) + 1;
  EXPECT_EQ(out.substr(next_line, out.find('\n', next_line) - next_line),
            "             lookup src/map.cc:15 s=0")
      << out;
  EXPECT_NE(out.find("lock:[0xfeed] lock_address:[0xfeed#2] lock_kind:[mutex] operation:[lock] "
                     "process:[pid 7 (cache)]"),
            std::string::npos)
      << out;
}

TEST(PprofReport, HoldWeightHasItsOwnSampleTypes) {
  const pb::Profile p = pprof_of(inlined_profile(), StackWeight::kHold);
  ASSERT_EQ(p.sample_type_size(), 2);
  EXPECT_EQ(value_type(p, p.sample_type(0)), "holds/count");
  EXPECT_EQ(value_type(p, p.sample_type(1)), "hold/nanoseconds");
  EXPECT_EQ(p.string_table(p.default_sample_type()), "hold");
  ASSERT_EQ(p.sample_size(), 1);  // no hold stacks: the acquire site alone
  EXPECT_EQ(p.sample(0).value(0), 4);
  EXPECT_EQ(p.sample(0).value(1), 50);
}

}  // namespace
}  // namespace lockscope
