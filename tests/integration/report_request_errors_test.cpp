// A report asked for in a way that cannot be met as asked is refused with one line and a hint,
// exit status 125, and by `run` before the program starts (so that no run is lost): a profile
// directory named like a report file, a report file whose extension no format has, a binary or
// viewer's format written to a terminal, a --sort key that is no column's. The errors_test.cpp
// cases' sequel (suite Errors).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <tuple>

#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

namespace fs = std::filesystem;

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

// The error's line is `message` exactly and the next is a hint starting with `hint`.
void expect_refusal(const CommandResult& result, const std::string& message,
                    const std::string& hint) {
  EXPECT_EQ(result.exit_status, 125) << result.err;
  EXPECT_EQ(first_line(result.err), "lockscope: error: " + message) << result.err;
  EXPECT_EQ(result.err.find("\nhint: " + hint), first_line(result.err).size()) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 2) << result.err;
}

// A program that leaves a file behind when it runs: the refusals come before it.
std::vector<std::string> marking_program(const std::string& marker) {
  return {"/bin/sh", "-c", "touch '" + marker + "'"};
}

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// `-o x.html` made a profile directory named x.html and no report (run printed it to stderr).
TEST(Errors, AProfileDirectoryNamedLikeAReportFileIsRefusedBeforeTheProgramRuns) {
  TemporaryDirectory dir;
  const std::string marker = dir / "ran";
  const std::pair<const char*, const char*> names[] = {
      {"x.html", "html"},        {"x.HTM", "html"},          {"x.json", "json"},
      {"x.pb.gz", "pprof"},      {"x.db", "sqlite"},         {"x.csv", "csv"},
      {"x.folded", "collapsed"}, {"x.trace.json", "chrome"}, {"x.speedscope.json", "speedscope"},
      {"x.txt", "text"}};
  for (const auto& [name, format] : names) {
    SCOPED_TRACE(name);
    const std::string profile = dir / name;
    expect_refusal(
        run_lockscope(joined({"run", "-o", profile, "--"}, marking_program(marker))),
        fmt::format("run: -o {} names the profile directory, not the {} report's file", profile,
                    format),
        fmt::format("-o names the profile directory; to write the {} report, give --report {} "
                    "(and -o DIR for the profile, default lockscope.prof)",
                    format, profile));
    expect_refusal(
        run_lockscope(joined({"record", "-o", profile, "--"}, marking_program(marker))),
        fmt::format("record: -o {} names the profile directory, not the {} report's file", profile,
                    format),
        fmt::format("-o names the profile directory, and record writes no report: lockscope "
                    "record -o DIR -- CMD, then lockscope report DIR -o {}",
                    profile));
    EXPECT_FALSE(fs::exists(profile));
    EXPECT_FALSE(fs::exists(marker)) << "the program must not have been started";
  }
  // A name without a report's extension is a directory as before.
  const CommandResult plain =
      run_lockscope(joined({"record", "-o", dir / "p.v2"}, marking_program(marker)));
  EXPECT_EQ(plain.exit_status, 0) << plain.err;
  EXPECT_TRUE(fs::is_directory(dir / "p.v2"));
}

// `-o x.svg` wrote the text report into x.svg, and `-o x.json.gz` text into a file that claims
// gzip. A name without an extension, `.txt`, `.out`, `.log`, `-`, and the names of devices and
// descriptors are text as before; with -f, any name takes the format asked for.
TEST(Errors, AReportFileWithAnExtensionNoFormatHasIsRefused) {
  TemporaryDirectory dir;
  ASSERT_EQ(run_lockscope({"record", "-o", dir / "p", "--", fixture("counter_threads"), "1", "1"})
                .exit_status,
            0);
  const std::string formats =
      "(formats: text, json, collapsed, speedscope, pprof, csv, sqlite, chrome, html, sarif)";
  const std::string hint =
      "choose the format with -f FORMAT (then any name will do), or end the name with one of: "
      ".txt .out .log .json .collapsed .folded .speedscope.json .pb.gz .pprof .csv .db .sqlite "
      ".sqlite3 .trace.json .html .htm";
  for (const auto& [name, extension] : {std::pair{"x.svg", ".svg"}, {"x.json.gz", ".gz"}}) {
    const std::string file = dir / name;
    expect_refusal(run_lockscope({"report", dir / "p", "-o", file}),
                   fmt::format("report: -o {}: no report format has the extension '{}' {}", file,
                               extension, formats),
                   hint);
    EXPECT_FALSE(fs::exists(file));
  }
  const std::string marker = dir / "ran";
  expect_refusal(run_lockscope(joined({"run", "-o", dir / "q", "--report", dir / "r.svg", "--"},
                                      marking_program(marker))),
                 fmt::format("run: --report {}: no report format has the extension '.svg' {}",
                             dir / "r.svg", formats),
                 hint);
  EXPECT_FALSE(fs::exists(marker)) << "the program must not have been started";
  EXPECT_FALSE(fs::exists(dir / "q"));

  for (const char* name : {"plain", "r.txt", "report.out", "lockscope.log"}) {
    const CommandResult text = run_lockscope({"report", dir / "p", "-o", dir / name});
    EXPECT_EQ(text.exit_status, 0) << name << ": " << text.err;
    EXPECT_EQ(slurp(dir / name).rfind("lockscope report of", 0), 0u) << name;
  }
  for (const char* name : {"-", "/dev/stdout"}) {
    const CommandResult text = run_lockscope({"report", dir / "p", "-o", name});
    EXPECT_EQ(text.exit_status, 0) << name << ": " << text.err;
    EXPECT_EQ(text.out.rfind("lockscope report of", 0), 0u) << name;
  }
  const CommandResult to_null = run_lockscope({"report", dir / "p", "-o", "/dev/null"});
  EXPECT_EQ(to_null.exit_status, 0) << to_null.err;
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  const CommandResult chosen =
      run_lockscope({"report", dir / "p", "-f", "json", "-o", dir / "j.svg"});
  EXPECT_EQ(chosen.exit_status, 0) << chosen.err;
  EXPECT_NO_THROW(nlohmann::json::parse(slurp(dir / "j.svg")));
}

// What the terminal showed, without the \r its line discipline adds.
std::string shown_lines(std::string shown) {
  std::erase(shown, '\r');
  return shown;
}

// `report -f html` on a terminal poured a page of HTML and script over it (pprof: gzip's bytes).
// The terminal is a real one, a pseudo-terminal on stdout; the same report into a pipe is written.
TEST(Errors, BinaryAndViewerFormatsAreRefusedOnATerminal) {
  TemporaryDirectory dir;
  ASSERT_EQ(run_lockscope({"record", "-o", dir / "p", "--", fixture("counter_threads"), "1", "1"})
                .exit_status,
            0);
  const std::tuple<const char*, const char*, const char*> refused[] = {
      {"html", "a web page for a browser", ".html"},
      {"pprof", "gzip-compressed protobuf", ".pb.gz"},
      {"sqlite", "an SQLite database file", ".db"},
      {"chrome", "Trace Event JSON for a trace viewer", ".trace.json"},
      {"speedscope", "JSON for speedscope to draw", ".speedscope.json"}};
  for (const auto& [format, what, extension] : refused)
    for (const std::vector<std::string>& output :
         {std::vector<std::string>{}, {"-o", "-"}, {"-o", "/dev/stdout"}}) {
      SCOPED_TRACE(fmt::format("{} {}", format, fmt::join(output, " ")));
      TerminalCommand command = start_on_terminal(
          joined({LOCKSCOPE_CLI, "report", dir / "p", "-f", format}, output), dir, false);
      bool timed_out = false;
      const CommandResult result = finish_on_terminal(command, 60, &timed_out);
      ASSERT_FALSE(timed_out);
      expect_refusal(result,
                     fmt::format("report: refusing to write {} to a terminal ({})", format, what),
                     fmt::format("write it to a file: -o report{}", extension));
      EXPECT_EQ(result.out, "") << "the terminal showed: " << result.out.substr(0, 200);
    }
  // Text a person reads is written to the terminal.
  for (const char* format : {"text", "json", "csv", "collapsed"}) {
    TerminalCommand command =
        start_on_terminal({LOCKSCOPE_CLI, "report", dir / "p", "-f", format}, dir, false);
    bool timed_out = false;
    const CommandResult result = finish_on_terminal(command, 60, &timed_out);
    EXPECT_EQ(result.exit_status, 0) << format << ": " << result.err;
    if (std::string(format) != "collapsed") {  // no contended wait here: no folded stack
      EXPECT_NE(result.out, "") << format;
    }
  }
  const CommandResult piped = run_lockscope({"report", dir / "p", "-f", "html"});
  EXPECT_EQ(piped.exit_status, 0) << piped.err;
  EXPECT_EQ(piped.out.rfind("<!DOCTYPE html>", 0), 0u) << piped.out.substr(0, 100);

  // `run` writes its report to stderr: refused when that is the terminal, before the program runs.
  const std::string marker = dir / "ran";
  TerminalCommand run = start_on_terminal(
      joined({LOCKSCOPE_CLI, "run", "-o", dir / "q", "-f", "pprof", "--"}, marking_program(marker)),
      dir, true);
  bool timed_out = false;
  const CommandResult result = finish_on_terminal(run, 60, &timed_out);
  EXPECT_EQ(result.exit_status, 125);
  EXPECT_EQ(shown_lines(result.out),
            "lockscope: error: run: refusing to write pprof to a terminal (gzip-compressed "
            "protobuf)\nhint: write it to a file: --report report.pb.gz\n");
  EXPECT_FALSE(fs::exists(marker)) << "the program must not have been started";
}

// The error listed no key: `--help` has them, but a mistyped key wants them on its line.
TEST(Errors, AnUnknownSortKeyListsTheKeys) {
  TemporaryDirectory dir;
  const std::string keys =
      "(keys: lock, acquired, contended, failed, handoffs, cross-cpu, le-1us, le-10us, le-100us, "
      "le-1ms, gt-1ms, wait, wait-max, wait-p99, hold, hold-error, hold-max)";
  expect_refusal(run_lockscope({"report", dir.path(), "--sort", "bogus"}),
                 "report: --sort: 'bogus' is not a column's key " + keys,
                 "see `lockscope report --help`");
  const std::string marker = dir / "ran";
  expect_refusal(run_lockscope(joined({"run", "-o", dir / "p", "--sort", "waits", "--"},
                                      marking_program(marker))),
                 "run: --sort: 'waits' is not a column's key " + keys,
                 "see `lockscope run --help`");
  EXPECT_FALSE(fs::exists(marker)) << "the program must not have been started";
}

}  // namespace
}  // namespace lockscope::testing
