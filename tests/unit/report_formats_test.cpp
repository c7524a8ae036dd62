// The writer registry (names, extensions, help) and what each machine format makes of a
// hand-built profile: collapsed lines, a speedscope document, RFC 4180 quoting in csv; the file
// sink's errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "code_locations.h"
#include "one_mutex_profile.h"
#include "report/report_writer.h"

namespace lockscope {
namespace {

TEST(ReportFormats, ExtensionsPickTheLongestMatch) {
  EXPECT_EQ(format_for_path("r.json"), "json");
  EXPECT_EQ(format_for_path("r.speedscope.json"), "speedscope");
  EXPECT_EQ(format_for_path("dir.v2/R.SPEEDSCOPE.JSON"), "speedscope");
  EXPECT_EQ(format_for_path("r.collapsed"), "collapsed");
  EXPECT_EQ(format_for_path("r.folded"), "collapsed");
  EXPECT_EQ(format_for_path("r.csv"), "csv");
  EXPECT_EQ(format_for_path("r.db"), "sqlite");
  EXPECT_EQ(format_for_path("r.trace.json"), "chrome");
  EXPECT_EQ(format_for_path("r.html"), "html");
  EXPECT_EQ(format_for_path("R.HTM"), "html");
  EXPECT_EQ(format_for_path("r.txt"), "text");
  EXPECT_EQ(format_for_path("r.out"), "text");
  EXPECT_EQ(format_for_path("report"), "text");
}

// A name without an extension is text (stdout, devices, descriptors, a directory's dots aside); an
// extension no format has is refused, naming it and the formats, where it was written as text.
TEST(ReportFormats, NoExtensionIsTextAndAnUnknownOneIsRefused) {
  for (const char* path : {"-", "/dev/stdout", "/dev/null", "/dev/fd/3", "/proc/self/fd/1",
                           "dir.v2/report", ".report", "report."})
    EXPECT_EQ(format_for_path(path), "text") << path;
  for (const auto& [path, extension] : {std::pair{"x.svg", ".svg"},
                                        {"r.json.gz", ".gz"},
                                        {"r.json.bak", ".bak"},
                                        {"dir/R.PDF", ".PDF"}}) {
    try {
      format_for_path(path);
      ADD_FAILURE() << path << ": no exception";
    } catch (const std::invalid_argument& error) {
      EXPECT_EQ(error.what(), "no report format has the extension '" + std::string(extension) +
                                  "' (formats: text, json, collapsed, speedscope, pprof, csv, "
                                  "sqlite, chrome, html, sarif)");
    }
  }
  EXPECT_EQ(format_with_extension("x.svg"), nullptr);
  EXPECT_EQ(format_with_extension("x.pb.gz"), find_report_format("pprof"));
  EXPECT_EQ(report_extensions().substr(0, 21), ".txt .out .log .json ");
}

TEST(ReportFormats, EveryFormatIsMadeAndListedInTheHelp) {
  const std::string help = report_formats_help();
  for (const ReportFormat& format : report_format_table()) {
    EXPECT_NE(format.make(), nullptr) << format.name;
    EXPECT_NE(help.find("  " + format.name + " "), std::string::npos) << help;
    EXPECT_NE(help.find(format.help), std::string::npos) << help;
    for (const std::string& extension : format.extensions)
      EXPECT_EQ(format_for_path("x" + extension), format.name);
  }
  EXPECT_EQ(report_formats().front(), "text");
}

TEST(ReportFormats, UnknownFormatNamesTheKnownOnes) {
  try {
    make_report_writer("nosuch");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(),
                 "unknown report format 'nosuch' (known: text, json, collapsed, speedscope, pprof, "
                 "csv, sqlite, chrome, html, sarif)");
  }
}

CodeLocation location(const std::string& function, int line) {
  return code_location(function, "src/map.cc", line);
}

// A mutex that waited at a site named with a comma and a quote.
Profile small_profile() {
  return one_mutex_profile(location("Map<int, \"k\">::at", 10), location("main", 20));
}

std::string written(const std::string& format, const ReportOptions& options = {}) {
  std::ostringstream out;
  make_report_writer(format)->write(small_profile(), options, out);
  return out.str();
}

TEST(ReportFormats, CollapsedStacksOutermostFirstWithTheLockAsLeaf) {
  // The waits whose stack was not captured stand on their call site under a frame that says so.
  EXPECT_EQ(
      written("collapsed"),
      "pid 7 (cache);(stack not captured);Map<int, \"k\">::at src/map.cc:10;mutex 0xfeed 300\n"
      "pid 7 (cache);main src/map.cc:20;Map<int, \"k\">::at src/map.cc:10;mutex 0xfeed 600\n");
  ReportOptions hold;
  hold.weight = StackWeight::kHold;
  EXPECT_EQ(
      written("collapsed", hold),
      "pid 7 (cache);(stack not captured);Map<int, \"k\">::at src/map.cc:10;mutex 0xfeed 50\n");
}

TEST(ReportFormats, SpeedscopeSharesFramesAndWeighsSamples) {
  const auto document = nlohmann::json::parse(written("speedscope"));
  EXPECT_EQ(document["$schema"], "https://www.speedscope.app/file-format-schema.json");
  const auto& frames = document["shared"]["frames"];
  // The site, main, the lock, the not-captured marker: each once over both samples.
  ASSERT_EQ(frames.size(), 4u);
  const auto& profile = document["profiles"][0];
  EXPECT_EQ(profile["type"], "sampled");
  EXPECT_EQ(profile["unit"], "nanoseconds");
  EXPECT_EQ(profile["endValue"], 900);
  EXPECT_EQ(profile["weights"], nlohmann::json::parse("[600, 300]"));
  std::vector<std::string> names;
  for (const auto& index : profile["samples"][0])
    names.push_back(frames[index.get<size_t>()]["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"main src/map.cc:20",
                                             "Map<int, \"k\">::at src/map.cc:10", "mutex 0xfeed"}));
  EXPECT_EQ(frames[profile["samples"][0][0].get<size_t>()]["line"], 20);
}

TEST(ReportFormats, SpeedscopeWritesANameThatIsNotUtf8) {
  Profile profile = small_profile();
  profile.processes[0].stacks[0][1] = location("caf\xe9", 20);  // Latin-1, as some paths are
  std::ostringstream out;
  make_report_writer("speedscope")->write(profile, ReportOptions{}, out);
  const auto document = nlohmann::json::parse(out.str());
  EXPECT_EQ(document["shared"]["frames"][0]["name"], "caf\uFFFD src/map.cc:20");
}

TEST(ReportFormats, CsvQuotesByRfc4180) {
  ReportOptions sites;
  sites.table = "sites";
  const std::string csv = written("csv", sites);
  EXPECT_EQ(csv.substr(0, csv.find("\r\n")),
            "pid,name,address,generation,side,kind,operation,count,contended,failed,wait_ns,"
            "wait_max_ns,"
            "hold_ns,hold_error_ns,hold_max_ns,holds_timed,cross_cpu,same_cpu,function,file,line,"
            "caller,inlined_into");
  EXPECT_NE(csv.find("\r\n7,0xfeed,0xfeed,0,,mutex,lock,4,3,0,900,0,50,0,0,0,0,0,\"Map<int, "
                     "\"\"k\"\">::at\","
                     "src/map.cc,10,\"Map<int, \"\"k\"\">::at src/map.cc:10\",\r\n"),
            std::string::npos)
      << csv;
  const std::string locks = written("csv");
  // A profile not symbolized has no names: its locks are named by their addresses.
  EXPECT_NE(locks.find("\r\n7,0xfeed,0xfeed,0,,mutex,4,3,0,"), std::string::npos) << locks;
}

TEST(ReportSink, UncreatableFileSaysWhy) {
  ReportSink sink(std::string("/dev/null/report.csv"));
  EXPECT_TRUE(sink.is_file());
  try {
    sink.stream();
    FAIL() << "no exception";
  } catch (const ReportSinkError& error) {
    EXPECT_STREQ(error.what(), "Not a directory");
  }
}

}  // namespace
}  // namespace lockscope
