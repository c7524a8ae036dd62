// The html writer on a hand-built profile: one page that loads nothing (every script and style
// inline, no src or href to anywhere), whose data no name can break out of (a frame named
// "</script>", bytes that are not UTF-8), and which carries the shared views' figures: the flame
// graphs' trees, the locks table, the blame rows. The embedded libraries are the vendored files'
// bytes. (tests/integration/html_report_test.cpp opens real reports in Chromium.)
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "code_locations.h"
#include "one_mutex_profile.h"
#include "report/html_page.h"
#include "report/report_writer.h"

namespace lockscope {
namespace {

using nlohmann::json;

constexpr std::string_view kDataOpen = R"(<script type="application/json" id="lockscope-data">)";

std::string page_of(const Profile& profile, const ReportOptions& options = {}) {
  std::ostringstream out;
  make_report_writer("html")->write(profile, options, out);
  return out.str();
}

Profile profile_with_site(const std::string& function) {
  return one_mutex_profile(code_location(function, "src/map.cc", 10),
                           code_location("main", "src/main.cc", 20));
}

// The text of the page's data element, up to the first "</script" after it.
std::string data_text(const std::string& page) {
  const size_t open = page.find(kDataOpen);
  EXPECT_NE(open, std::string::npos);
  if (open == std::string::npos) return "";
  const size_t begin = open + kDataOpen.size();
  return page.substr(begin, page.find("</script", begin) - begin);
}

size_t occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++count;
  return count;
}

TEST(HtmlReport, TheFormatTableListsIt) {
  const ReportFormat* html = find_report_format("html");
  ASSERT_NE(html, nullptr);
  EXPECT_EQ(html->extensions, (std::vector<std::string>{".html", ".htm"}));
  EXPECT_EQ(html->options, (std::vector<std::string>{"--weight"}));
  EXPECT_EQ(format_for_path("out/Report.HTML"), "html");
  EXPECT_NE(report_formats_help().find("  html "), std::string::npos);
}

TEST(HtmlReport, IsOnePageThatLoadsNothing) {
  const std::string page = page_of(profile_with_site("Map::at"));
  EXPECT_TRUE(page.starts_with("<!DOCTYPE html>\n")) << page.substr(0, 100);
  EXPECT_TRUE(page.ends_with("</html>\n"));
  EXPECT_EQ(occurrences(page, "<html"), 1u);
  EXPECT_EQ(occurrences(page, "@@"), 0u) << "a placeholder left in the page";
  // No element that fetches: no src or href to anything but the page's own anchors.
  const std::regex fetching(R"(<(script|link|img|iframe|object|embed|source)\b[^>]*>)",
                            std::regex::icase);
  size_t elements = 0;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), fetching);
       it != std::sregex_iterator(); ++it) {
    const std::string tag = it->str();
    ++elements;
    EXPECT_EQ(tag.find("src"), std::string::npos) << tag;
    EXPECT_EQ(tag.find("href"), std::string::npos) << tag;
    EXPECT_EQ(tag.find("<link"), std::string::npos) << tag;
  }
  EXPECT_EQ(elements, 6u);  // the error trap, d3, d3-flame-graph, the data, charts.js, report.js
  EXPECT_FALSE(std::regex_search(
      page, std::regex(R"((src|href)\s*=\s*["']?\s*(https?:)?//)", std::regex::icase)));
  EXPECT_FALSE(std::regex_search(page, std::regex(R"(@import|url\(\s*["']?https?:)")));
}

TEST(HtmlReport, AFrameNamedScriptEndCannotBreakOut) {
  const std::string evil = "</script><script>alert(1)</script><!-- x & y -->";
  const std::string plain_page = page_of(profile_with_site("Map::at"));
  const std::string page = page_of(profile_with_site(evil));
  // As many element ends as the page always has: the name added none.
  EXPECT_EQ(occurrences(page, "</script"), occurrences(plain_page, "</script"));
  EXPECT_EQ(occurrences(page, "<script"), occurrences(plain_page, "<script"));
  const std::string text = data_text(page);
  for (const char* forbidden : {"<", ">", "&"})
    EXPECT_EQ(text.find(forbidden), std::string::npos) << forbidden;
  const json data = json::parse(text);  // the data element holds the whole document
  const json& root = data["processes"][0]["flame"]["wait"];
  EXPECT_EQ(root["name"], "pid 7 (cache)");
  const json& outer = root["children"][1];  // main, then the site
  EXPECT_EQ(outer["children"][0]["name"], evil + " src/map.cc:10") << root.dump();
}

TEST(HtmlReport, NamesThatAreNotUtf8AreWrittenWithReplacementCharacters) {
  Profile profile = profile_with_site("caf\xe9");
  profile.directory = "prof-\xff";
  profile.processes[0].arguments = {"./cache", "--name=\xc3("};
  const json data = json::parse(data_text(page_of(profile)));
  EXPECT_EQ(data["directory"], "prof-\uFFFD");
  EXPECT_EQ(data["processes"][0]["flame"]["wait"]["children"][1]["children"][0]["name"],
            "caf\uFFFD src/map.cc:10");
  EXPECT_EQ(data["processes"][0]["arguments"][1], "--name=\uFFFD(");
}

TEST(HtmlReport, CarriesTheSharedViewsFigures) {
  ReportOptions hold;
  hold.weight = StackWeight::kHold;
  const json data = json::parse(data_text(page_of(profile_with_site("Map::at"), hold)));
  EXPECT_EQ(data["weight"], "hold");
  const json& process = data["processes"][0];
  // weighted_stacks: 900 ns of waits (600 on the captured stack, 300 at the site alone), 50 held.
  EXPECT_EQ(process["flame"]["wait"]["value"], 900);
  EXPECT_EQ(process["flame"]["wait"]["count"], 3);
  EXPECT_EQ(process["flame"]["hold"]["value"], 50);
  EXPECT_EQ(process["flame"]["wait"]["kind"], "process");
  // Children by name: the waits without a stack first, under a frame that says so.
  const json& uncaptured = process["flame"]["wait"]["children"][0];
  EXPECT_EQ(uncaptured["name"], "(stack not captured)");
  EXPECT_EQ(uncaptured["kind"], "not-captured");
  EXPECT_EQ(uncaptured["value"], 300);
  EXPECT_EQ(uncaptured["count"], 2);
  const json& site = uncaptured["children"][0];
  EXPECT_EQ(site["name"], "Map::at src/map.cc:10");
  EXPECT_FALSE(site.contains("kind"));
  EXPECT_EQ(site["children"][0]["name"], "mutex 0xfeed");
  EXPECT_EQ(site["children"][0]["kind"], "lock");
  const json& outer = process["flame"]["wait"]["children"][1];
  EXPECT_EQ(outer["name"], "main src/main.cc:20");
  EXPECT_EQ(outer["value"], 600);
  EXPECT_EQ(outer["count"], 1);
  EXPECT_EQ(outer["children"][0]["name"], "Map::at src/map.cc:10");
  EXPECT_EQ(outer["children"][0]["children"][0]["name"], "mutex 0xfeed");
  // The locks table: lock_rows.h's columns and cells.
  const json& locks = data["locks"];
  EXPECT_EQ(locks["columns"][0]["header"], "LOCK");
  ASSERT_EQ(locks["rows"].size(), 1u);
  EXPECT_EQ(locks["rows"][0]["cells"][0], "7/0xfeed");
  EXPECT_EQ(locks["rows"][0]["cells"].size(), locks["columns"].size());
  EXPECT_TRUE(process["timeline"].is_null());  // not traced
}

TEST(HtmlReport, BlameRowsNameBothSidesAndTheirStacks) {
  Profile profile = profile_with_site("Map::at");
  SiteSummary& site = profile.processes[0].locks[0].sites[0];
  Blame blame;
  blame.holder_site = code_location("Map::insert", "src/map.cc", 30);
  blame.waits = 2;
  blame.wait_ns = 700;
  blame.waiter_stack = 0;
  Blame behind_readers;  // no holder site
  behind_readers.waits = 1;
  behind_readers.wait_ns = 200;
  site.blame = {blame, behind_readers};
  const json data = json::parse(data_text(page_of(profile)));
  const json& rows = data["processes"][0]["blame"]["rows"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["lock"], "mutex 0xfeed");
  EXPECT_EQ(rows[0]["waiter"], "Map::at src/map.cc:10");
  EXPECT_EQ(rows[0]["holder"], "Map::insert src/map.cc:30");
  EXPECT_EQ(rows[0]["wait_ns"], 700);
  EXPECT_TRUE(rows[0]["holder_stack"].is_null());
  const json& stack =
      data["processes"][0]["blame"]["stacks"][rows[0]["waiter_stack"].get<size_t>()];
  EXPECT_EQ(stack, json::parse(R"(["Map::at src/map.cc:10", "main src/main.cc:20"])"));
  EXPECT_EQ(rows[1]["holder"], "(not known: behind readers, or released before the wait was seen)");
}

// The libraries in the binary are third_party/web's files, byte for byte, and none has a
// sequence that would end its <script> early or open a comment the HTML parser would honour.
TEST(HtmlReport, EmbeddedLibrariesAreTheVendoredFiles) {
  for (const char* path : {"d3/d3.min.js", "d3-flame-graph/d3-flamegraph.umd.min.js"}) {
    std::ifstream in(std::string(LOCKSCOPE_SOURCE_DIR) + "/third_party/web/" + path,
                     std::ios::binary);
    ASSERT_TRUE(in) << path;
    std::stringstream file;
    file << in.rdbuf();
    const std::string name = std::string(path).substr(std::string(path).find('/') + 1);
    const std::string text = html_file(name).text();
    EXPECT_EQ(text.size(), file.str().size()) << name;
    EXPECT_TRUE(text == file.str()) << name;
    EXPECT_GT(html_file(name).chunks.size(), name == "d3.min.js" ? 4u : 0u);
    std::string lower = text;
    for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(lower.find("</script"), std::string::npos) << name;
    EXPECT_EQ(lower.find("<!--"), std::string::npos) << name;
  }
  EXPECT_THROW(html_file("nosuch.js"), std::logic_error);
  // The page's notice names the versions vendored.
  const std::string page = html_file("report.html").text();
  for (const char* library : {"d3", "d3-flame-graph"}) {
    std::ifstream in(std::string(LOCKSCOPE_SOURCE_DIR) + "/third_party/web/" + library +
                     "/VERSION");
    std::string version;
    ASSERT_TRUE(std::getline(in, version)) << library;
    EXPECT_NE(page.find(std::string(" ") + library + " " + version + " ("), std::string::npos)
        << library;
  }
}

}  // namespace
}  // namespace lockscope
