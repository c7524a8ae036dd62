// `lockscope diff -f html` on real runs of diff_knobs, the lookup's hold doubled in NEW: the JSON
// inside the page has the flame graph's stack through the lookup site red (a positive delta), its
// totals the program wait's medians that `diff -f json` reports, frames and locks by name; its
// changes are the markdown diff's rows; and the page opens in headless Chromium without an error.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "integration/chromium_page.h"
#include "integration/lockscope_harness.h"

namespace lockscope::testing {
namespace {

using nlohmann::json;

const std::string kProcess = "fixture_diff_knobs";
const std::string kLockLeaf = "mutex table_lock";

// The fixture's arguments (THREADS ROUNDS LOOKUP_US UPDATE_US SPLIT, as diff_test.cpp's Knobs):
// two threads, the lookup holding the lock `lookup_us`.
std::vector<std::string> knobs(int lookup_us) {
  return {fixture("diff_knobs"), "2", "15", std::to_string(lookup_us), "1000", "0"};
}

// base/1 … base/N with the lookup's hold 1 ms, new/1 … new/N with 2 ms, alternating (holds of a
// millisecond: a loaded machine's wake-up delays stay small beside the change).
void record_sets(const TemporaryDirectory& dir, int runs) {
  for (int run = 1; run <= runs; ++run)
    for (const auto& [side, lookup_us] : {std::pair{"base", 1000}, {"new", 2000}}) {
      std::vector<std::string> args = {"record", "-o",
                                       dir / (std::string(side) + "/" + std::to_string(run)), "--"};
      for (const std::string& arg : knobs(lookup_us)) args.push_back(arg);
      const CommandResult recorded = run_lockscope(args);
      ASSERT_EQ(recorded.exit_status, 0) << recorded.err;
    }
}

const std::string kDataStart = R"(<script type="application/json" id="lockscope-data">)";

// The page's data: the JSON in its <script type="application/json">.
json page_data(const std::string& page) {
  const size_t begin = page.find(kDataStart);
  if (begin == std::string::npos) {
    ADD_FAILURE() << "no data in the page";
    return json();
  }
  const size_t from = begin + kDataStart.size();
  return json::parse(page.substr(from, page.find("</script>", from) - from));
}

struct TreeNode {
  const json* node;
  const json* parent;  // null: the root
};
void collect(const json& node, const json* parent, std::vector<TreeNode>& out) {
  out.push_back({&node, parent});
  for (const json& child : node["children"]) collect(child, &node, out);
}

const json* matched(const json& document, const std::string& key) {
  for (const json& entity : document["matched"])
    if (entity["key"] == key) return &entity;
  return nullptr;
}

TEST(DiffHtml, TheLookupsStackIsRedAndTheTotalsAreTheJsonDiffsMedians) {
  TemporaryDirectory dir;
  record_sets(dir, 7);
  const CommandResult written =
      run_lockscope({"diff", dir / "base", dir / "new", "-o", dir / "diff.html"});
  // The regression diff_test.cpp checks (1), whatever the machine made of it here: the page is
  // written either way, and every format agrees on the gate.
  ASSERT_NE(written.exit_status, 2) << written.err;
  EXPECT_TRUE(written.out.empty()) << written.out.substr(0, 200);
  const std::string page = slurp(dir / "diff.html");
  // -o x.html picked the format -f html names.
  const CommandResult to_stdout = run_lockscope({"diff", dir / "base", dir / "new", "-f", "html"});
  EXPECT_EQ(to_stdout.exit_status, written.exit_status);
  EXPECT_TRUE(to_stdout.out == page) << "-f html and -o diff.html differ";
  const json data = page_data(page);
  const CommandResult json_run = run_lockscope({"diff", dir / "base", dir / "new", "-f", "json"});
  ASSERT_EQ(json_run.exit_status, written.exit_status) << json_run.err;
  const json document = json::parse(json_run.out);
  EXPECT_EQ(data["verdict"], document["verdict"]);

  // The totals: the program's wait, median [min–max] over each side's runs, as JSON has them.
  const json* program = matched(document, "");
  ASSERT_NE(program, nullptr);
  for (const auto& [side, total] : {std::pair{"base", "base_total"}, {"new", "new_total"}})
    for (const char* figure : {"median", "min", "max"})
      EXPECT_EQ(data["flame"][total][figure].get<double>(),
                (*program)["metrics"]["wait"][side][figure].get<double>())
          << side << " " << figure;

  // The tree: the process by its executable's name, the lock by its name; each node's weights its
  // children's added up (the stacks' medians).
  const json& tree = data["flame"]["tree"];
  ASSERT_TRUE(tree.is_object()) << data["flame"].dump().substr(0, 500);
  EXPECT_EQ(tree["name"], kProcess);
  EXPECT_EQ(tree["kind"], "process");
  std::vector<TreeNode> nodes;
  collect(tree, nullptr, nodes);
  std::size_t leaves = 0;
  for (const TreeNode& at : nodes) {
    const json& node = *at.node;
    EXPECT_NEAR(node["delta"].get<double>(),
                node["value"].get<double>() - node["base"].get<double>(), 1e-6);
    if (node["children"].empty()) {
      ++leaves;
      EXPECT_EQ(node["kind"], "lock");
      EXPECT_EQ(node["name"], kLockLeaf);  // no address, no generation
      continue;
    }
    double value = 0, base = 0;
    for (const json& child : node["children"]) {
      value += child["value"].get<double>();
      base += child["base"].get<double>();
    }
    EXPECT_NEAR(node["value"].get<double>(), value, 1e-6 * value + 1e-6) << node["name"];
    EXPECT_NEAR(node["base"].get<double>(), base, 1e-6 * base + 1e-6) << node["name"];
  }
  EXPECT_EQ(leaves, data["flame"]["stacks"].get<std::size_t>());

  // The lookup site's frame, by function and file:line, with the lock above it: more wait in NEW,
  // where the other thread holds the lock twice as long at each lookup.
  const std::string lookup =
      "take diff_knobs.c:" + std::to_string(marker_line("diff_knobs", "lookup-lock"));
  double lookup_delta = 0;
  bool captured = false;
  for (const TreeNode& at : nodes) {
    if ((*at.node)["name"] != lookup) continue;
    const json& children = (*at.node)["children"];
    ASSERT_EQ(children.size(), 1u);
    EXPECT_EQ(children[0]["name"], kLockLeaf);
    lookup_delta += children[0]["delta"].get<double>();
    captured |= (*at.parent)["name"].get<std::string>().rfind("worker diff_knobs.c:", 0) == 0;
  }
  EXPECT_TRUE(captured) << "no captured stack worker → " << lookup << "\n"
                        << tree.dump().substr(0, 3000);
  EXPECT_GT(lookup_delta, 0) << tree.dump().substr(0, 3000);

  // The changes: the markdown diff's rows, each side's median [min–max] as it words them.
  const CommandResult markdown =
      run_lockscope({"diff", dir / "base", dir / "new", "-f", "markdown"});
  ASSERT_FALSE(data["changes"].empty());
  std::size_t rows = 0;
  for (const json& row : data["changes"]) {
    const std::string cells =
        " | " + row["figure"].get<std::string>() + " | " + row["base"].get<std::string>() + " | " +
        row["new"].get<std::string>() + " | " + row["change"].get<std::string>() + " | ";
    EXPECT_NE(markdown.out.find(cells), std::string::npos) << cells << "\n" << markdown.out;
    ++rows;
  }
  std::size_t table_rows = 0;
  for (size_t at = markdown.out.find("\n| "); at != std::string::npos;
       at = markdown.out.find("\n| ", at + 1))
    ++table_rows;
  EXPECT_EQ(rows + 1, table_rows) << markdown.out;  // and the header
}

TEST(DiffHtml, ChromiumDrawsThePageWithoutAnErrorAndSeesABrokenOne) {
  TemporaryDirectory dir;
  record_sets(dir, 1);
  const CommandResult written =
      run_lockscope({"diff", dir / "base", dir / "new", "-o", dir / "diff.html"});
  EXPECT_EQ(written.exit_status, 0) << written.err;  // 1 run a side: not judged
  const std::string page = slurp(dir / "diff.html");
  const json data = page_data(page);
  const ChromiumPage run = open_in_headless_chromium(dir / "diff.html", {"--dump-dom"});
  EXPECT_EQ(run.errors, "");
  for (const std::string& line : run.console) ADD_FAILURE() << "console: " << line;
  EXPECT_NE(run.dom.find(">" + data["verdict"].get<std::string>() + "</p>"), std::string::npos)
      << run.dom.substr(0, 3000);
  const size_t flame = run.dom.find("id=\"flame\"");
  ASSERT_NE(flame, std::string::npos);
  const std::string graph = run.dom.substr(flame);
  // Frames drawn as labels: the process and the lock.
  EXPECT_NE(graph.find(">" + kProcess + "</div>"), std::string::npos) << graph.substr(0, 3000);
  EXPECT_NE(graph.find(">" + kLockLeaf + "</div>"), std::string::npos);
  // Drawn whole once loaded, not in the middle of an animation: the root's box as wide as its
  // frame.
  const size_t root = graph.find("name=\"" + kProcess + "\"");
  ASSERT_NE(root, std::string::npos);
  const auto width_after = [&](size_t at) {
    const size_t begin = graph.find("width=\"", at) + 7;
    return std::stod(graph.substr(begin, graph.find('"', begin) - begin));
  };
  const double frame_width = width_after(graph.rfind("<g ", root));
  EXPECT_GT(frame_width, 500);
  EXPECT_NEAR(width_after(graph.find("<rect", root)), frame_width, 0.5) << graph.substr(0, 2000);
  // More wait in NEW at the root: its frame, and at least it, drawn red.
  ASSERT_GT(data["flame"]["tree"]["delta"].get<double>(), 0);
  EXPECT_NE(graph.find("fill=\"rgb(220,"), std::string::npos) << graph.substr(0, 3000);
  EXPECT_NE(run.dom.find(">table_lock</td>"), std::string::npos);  // the changes table

  // Not onto a terminal (`script` gives the command one), as `report -f html`.
  const CommandResult on_terminal = run_command(
      {"/usr/bin/script", "-qec",
       std::string(LOCKSCOPE_CLI) + " diff " + dir / "base" + " " + dir / "new" + " -f html",
       "/dev/null"});
  EXPECT_EQ(on_terminal.exit_status, 2) << on_terminal.out;
  EXPECT_NE(on_terminal.out.find("lockscope: error: diff: refusing to write html to a terminal"),
            std::string::npos)
      << on_terminal.out;
  EXPECT_LT(on_terminal.out.size(), 400u);

  // The checks can fail: a page whose data does not parse is caught by its trap and the console.
  std::string broken = page;
  broken.insert(broken.find(kDataStart) + kDataStart.size(), "{");
  std::ofstream(dir / "broken.html", std::ios::binary) << broken;
  const ChromiumPage failed = open_in_headless_chromium(dir / "broken.html", {"--dump-dom"});
  EXPECT_NE(failed.errors.find("error: "), std::string::npos) << failed.errors;
  EXPECT_FALSE(failed.console.empty());
}

}  // namespace
}  // namespace lockscope::testing
