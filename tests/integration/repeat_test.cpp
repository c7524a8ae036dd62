// `record --repeat N` / `run --repeat N` and the report of a set of runs: each run's directory
// holds what a single run would, with the fixture's exact counts, and the set's report shows every
// run's figures (median [min–max] in text, each value in JSON) as the runs' own profiles have them.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/duration_format.h"
#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

namespace fs = std::filesystem;

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

void expect_error(const CommandResult& result, const std::string& needle) {
  EXPECT_EQ(result.exit_status, 125) << result.err;
  EXPECT_EQ(result.err.rfind("lockscope: error: ", 0), 0u) << result.err;
  EXPECT_NE(first_line(result.err).find(needle), std::string::npos) << result.err;
}

// The table row of `text` whose last column, the name, is `name`.
std::string row_of(const std::string& text, const std::string& name) {
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    if (line.size() > name.size() + 2 && line.ends_with("  " + name)) return line;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return "";
}

// "median [min–max]" of three counts, as the set's text report prints them.
// As the set's report writes three runs' values: "median [min–max]", the median alone when every
// run had the same.
std::string spread_text(std::vector<uint64_t> values) {
  std::sort(values.begin(), values.end());
  if (values.front() == values.back()) return format_count(values[1]);
  return format_count(values[1]) + " [" + format_count(values.front()) + "–" +
         format_count(values.back()) + "]";
}

bool has_profile_file(const std::string& directory) {
  return !profile_files(directory).empty();
}

struct CounterRun {
  uint64_t acquisitions = 0;
  uint64_t contended = 0;
};

// The counter lock's figures in one run's directory, checked against the fixture's exact count.
CounterRun counter_run(const std::string& directory, uint64_t expected) {
  const Profile profile = load_profile(directory);
  EXPECT_TRUE(profile.problems.empty()) << directory;
  if (profile.processes.size() != 1) {
    ADD_FAILURE() << directory << ": " << profile.processes.size() << " processes";
    return {};
  }
  const LockSummary* lock = lock_acquired_at(profile.processes[0], "counter_threads.c",
                                             marker_line("counter_threads", "counter-lock"));
  if (!lock) {
    ADD_FAILURE() << directory << ": no lock at the counter-lock line";
    return {};
  }
  EXPECT_EQ(lock->acquisitions, expected) << directory;
  EXPECT_EQ(lock->releases, expected) << directory;
  EXPECT_EQ(lock->name, "counter_mutex") << directory;
  // The process's figures are its one lock's: the set's process row shows the same.
  EXPECT_EQ(profile.processes[0].locks.size(), 1u) << directory;
  return {lock->acquisitions, lock->contended};
}

TEST(RepeatedRuns, EachRunHasTheExactCountsAndTheSetReportsEveryRun) {
  TemporaryDirectory dir;
  const std::string set = dir / "set";
  // Enough iterations that some runs' threads overlap and wait: counts that differ by run.
  const CommandResult recorded = run_lockscope(
      {"record", "--repeat", "3", "-o", set, "--", fixture("counter_threads"), "4", "50000"});
  ASSERT_EQ(recorded.exit_status, 0) << recorded.err;
  // Not a terminal: one line per run for a log, then where the set is.
  for (const char* run :
       {"run 1/3: exit status 0 in ", "run 2/3: exit status 0 in ", "run 3/3: exit status 0 in "})
    EXPECT_NE(recorded.err.find(std::string("lockscope: ") + run), std::string::npos)
        << recorded.err;
  EXPECT_NE(recorded.err.find("lockscope: 3 runs written to " + set + "/"), std::string::npos)
      << recorded.err;
  EXPECT_EQ(recorded.err.find("\r"), std::string::npos) << "no progress line on a pipe";

  EXPECT_FALSE(has_profile_file(set)) << "the set's directory holds only its runs";
  EXPECT_FALSE(fs::exists(set + "/4"));
  std::vector<CounterRun> runs;
  for (const char* run : {"1", "2", "3"}) runs.push_back(counter_run(set + "/" + run, 200'000));
  ASSERT_EQ(runs.size(), 3u);

  const CommandResult text = run_lockscope({"report", set});
  ASSERT_EQ(text.exit_status, 0) << text.err;
  EXPECT_EQ(text.out.rfind("3 runs of " + fixture("counter_threads") + " 4 50000\n", 0), 0u)
      << text.out.substr(0, 300);
  const std::string lock_row = row_of(text.out, "counter_mutex");
  const std::string process_row =
      row_of(text.out, fs::path(fixture("counter_threads")).filename().string());
  const std::string contended =
      spread_text({runs[0].contended, runs[1].contended, runs[2].contended});
  for (const std::string& row : {lock_row, process_row}) {
    // The same in every run: the figure alone, no range (a column of "[200,000–200,000]" says
    // nothing and pushes the names off the line).
    EXPECT_NE(row.find(" 200,000 "), std::string::npos) << text.out;
    EXPECT_EQ(row.find("[200,000"), std::string::npos) << text.out;
    EXPECT_NE(row.find(contended), std::string::npos) << contended << "\n" << text.out;
  }

  const CommandResult json = run_lockscope({"report", set, "-f", "json"});
  ASSERT_EQ(json.exit_status, 0) << json.err;
  const nlohmann::json document = nlohmann::json::parse(json.out);
  EXPECT_EQ(document["schema"], "lockscope-run-set");
  EXPECT_EQ(document["runs"], nlohmann::json({set + "/1", set + "/2", set + "/3"}));
  const nlohmann::json* lock = nullptr;
  const nlohmann::json* site = nullptr;
  const std::string lock_site =
      "counter_threads.c:" + std::to_string(marker_line("counter_threads", "counter-lock"));
  for (const nlohmann::json& entity : document["entities"]) {
    if (entity["kind"] == "lock" && entity["lock"] == "counter_mutex") lock = &entity;
    if (entity["kind"] == "site" && entity["lock"] == "counter_mutex" &&
        entity["site"].get<std::string>().find(lock_site) != std::string::npos)
      site = &entity;
  }
  ASSERT_NE(lock, nullptr) << json.out.substr(0, 2000);
  ASSERT_NE(site, nullptr) << json.out.substr(0, 4000);
  for (const nlohmann::json* entity : {lock, site}) {
    const nlohmann::json& metrics = (*entity)["metrics"];
    EXPECT_EQ(metrics["acquisitions"]["runs"], nlohmann::json({200'000, 200'000, 200'000}));
    EXPECT_EQ(metrics["acquisitions"]["median"], 200'000);
    EXPECT_EQ(metrics["contended"]["runs"],
              nlohmann::json({runs[0].contended, runs[1].contended, runs[2].contended}));
    for (const char* metric : {"acquisitions", "contended", "wait", "wait_p99", "hold"})
      EXPECT_EQ(metrics[metric]["runs"].size(), 3u) << metric;
  }
  EXPECT_EQ((*lock)["present"], nlohmann::json({true, true, true}));
}

// The runs come back in numeric order (10 after 9, not after 1), whatever the directory's order.
TEST(RepeatedRuns, RunsAreInNumericOrder) {
  TemporaryDirectory dir;
  const std::string set = dir / "set";
  const CommandResult recorded = run_lockscope(
      {"record", "--repeat", "11", "-o", set, "--", fixture("counter_threads"), "1", "10"});
  ASSERT_EQ(recorded.exit_status, 0) << recorded.err;
  const CommandResult json = run_lockscope({"report", set, "-f", "json"});
  ASSERT_EQ(json.exit_status, 0) << json.err;
  nlohmann::json expected = nlohmann::json::array();
  for (int run = 1; run <= 11; ++run) expected.push_back(set + "/" + std::to_string(run));
  EXPECT_EQ(nlohmann::json::parse(json.out)["runs"], expected);
}

// `run --repeat` prints the set's report at the end, on stderr as a single run's.
TEST(RepeatedRuns, RunPrintsTheSetsReport) {
  TemporaryDirectory dir;
  const CommandResult result = run_lockscope(
      {"run", "--repeat", "2", "-o", dir / "set", "--", fixture("counter_threads"), "2", "500"});
  ASSERT_EQ(result.exit_status, 0) << result.err;
  EXPECT_NE(result.err.find("2 runs of " + fixture("counter_threads") + " 2 500\n"),
            std::string::npos)
      << result.err;
  EXPECT_NE(row_of(result.err, "counter_mutex").find(" 1,000 "), std::string::npos) << result.err;
}

// A second set (or a single run) in the same directory moves the previous one, whole, to DIR.old:
// runs of two experiments never mix.
TEST(RepeatedRuns, APreviousSetOrProfileMovesToOldWhole) {
  TemporaryDirectory dir;
  const std::string set = dir / "set";
  const std::string old = set + ".old";
  auto record = [&](std::vector<std::string> options) {
    std::vector<std::string> args = {"record", "-o", set};
    args.insert(args.end(), options.begin(), options.end());
    for (const std::string& word :
         {std::string("--"), fixture("counter_threads"), std::string("1"), std::string("10")})
      args.push_back(word);
    const CommandResult result = run_lockscope(args);
    EXPECT_EQ(result.exit_status, 0) << result.err;
    return result;
  };
  record({"--repeat", "2"});
  const std::vector<std::string> first = profile_files(set + "/1");
  ASSERT_EQ(first.size(), 1u);

  const CommandResult second = record({"--repeat", "2"});
  EXPECT_NE(second.err.find("lockscope: previous set of runs moved to " + old), std::string::npos)
      << second.err;
  EXPECT_EQ(profile_files(old + "/1"),
            std::vector<std::string>{fs::path(old + "/1") / fs::path(first[0]).filename()});
  EXPECT_TRUE(has_profile_file(old + "/2"));
  EXPECT_TRUE(has_profile_file(set + "/1"));
  EXPECT_TRUE(has_profile_file(set + "/2"));
  EXPECT_NE(profile_files(set + "/1"), profile_files(old + "/1")) << "a new run, not the old one";

  // A single run where a set is: the set moves, whole; the directory holds the one profile.
  const CommandResult single = record({});
  EXPECT_NE(single.err.find("lockscope: previous set of runs moved to " + old), std::string::npos)
      << single.err;
  EXPECT_TRUE(has_profile_file(set));
  EXPECT_FALSE(fs::exists(set + "/1"));
  EXPECT_TRUE(has_profile_file(old + "/1"));
  EXPECT_TRUE(has_profile_file(old + "/2"));

  // A set where a single profile is: the profile moves.
  const CommandResult again = record({"--repeat", "2"});
  EXPECT_NE(again.err.find("lockscope: previous profile moved to " + old), std::string::npos)
      << again.err;
  EXPECT_TRUE(has_profile_file(old));
  EXPECT_FALSE(fs::exists(old + "/1"));
  EXPECT_FALSE(has_profile_file(set));
  EXPECT_TRUE(has_profile_file(set + "/2"));
}

// A run that fails ends the set there, as a benchmark treats a failing run: the runs before and
// its own profile are kept, and lockscope ends as the program did.
TEST(RepeatedRuns, AFailingRunEndsTheSetWithItsStatus) {
  TemporaryDirectory dir;
  const std::string set = dir / "set";
  const CommandResult exited = run_lockscope(
      {"record", "--repeat", "3", "-o", set, "--", fixture("exit_and_signal"), "exit", "3"});
  EXPECT_EQ(exited.exit_status, 3) << exited.err;
  EXPECT_NE(exited.err.find("lockscope: run 1/3 ended with exit status 3: the set stops there "
                            "(run 1 kept in " +
                            set + "/)"),
            std::string::npos)
      << exited.err;
  EXPECT_TRUE(has_profile_file(set + "/1"));
  EXPECT_FALSE(fs::exists(set + "/2"));
  const CommandResult report = run_lockscope({"report", set});
  EXPECT_EQ(report.exit_status, 0) << report.err;
  EXPECT_EQ(report.out.rfind("1 run of ", 0), 0u) << report.out.substr(0, 200);

  const CommandResult signaled = run_lockscope(
      {"run", "--repeat", "3", "-o", set, "--", fixture("exit_and_signal"), "signal", "15"});
  EXPECT_EQ(signaled.signal, 15) << signaled.exit_status << "\n" << signaled.err;
  EXPECT_NE(signaled.err.find("run 1/3 ended with signal SIGTERM: the set stops there"),
            std::string::npos)
      << signaled.err;
  EXPECT_FALSE(fs::exists(set + "/2"));
  EXPECT_NE(signaled.err.find("1 run of "), std::string::npos) << "the report of what was kept";
}

TEST(RepeatedRuns, BadCountsAreRefusedBeforeTheProgramRuns) {
  for (const char* command : {"record", "run"}) {
    for (const char* count : {"0", "abc", "1001", "-1"}) {
      SCOPED_TRACE(std::string(command) + " --repeat " + count);
      TemporaryDirectory dir;
      const CommandResult result = run_lockscope(
          {command, "--repeat", count, "-o", dir / "set", "--", fixture("counter_threads")});
      expect_error(result,
                   std::string(command) + ": --repeat: Value " + count + " not in range 1 to 1000");
      EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 2) << result.err;
      EXPECT_FALSE(fs::exists(dir / "set")) << "the program ran";
    }
  }
}

TEST(RepeatedRuns, ASetWithAMissingRunIsAnError) {
  TemporaryDirectory dir;
  const std::string set = dir / "set";
  ASSERT_EQ(run_lockscope(
                {"record", "--repeat", "3", "-o", set, "--", fixture("counter_threads"), "1", "10"})
                .exit_status,
            0);
  fs::remove_all(set + "/2");
  for (const char* format : {"text", "json"}) {
    const CommandResult result = run_lockscope({"report", set, "-f", format});
    expect_error(result, "set of runs with run 2 missing (it has 1 to 3, 2 of them)");
    EXPECT_TRUE(result.out.empty()) << result.out;
  }
}

// One run's formats and options describe one run: refused for a set, naming `report DIR/K`; and
// by `run --repeat` before the program runs.
TEST(RepeatedRuns, OneRunsFormatsAndOptionsPointToOneRun) {
  TemporaryDirectory dir;
  const std::string set = dir / "set";
  ASSERT_EQ(run_lockscope(
                {"record", "--repeat", "2", "-o", set, "--", fixture("counter_threads"), "1", "10"})
                .exit_status,
            0);
  expect_error(run_lockscope({"report", set, "-f", "csv"}),
               "lockscope report " + set + "/K -f csv");
  expect_error(run_lockscope({"report", set, "--brief"}), "--brief shapes one run's report");
  const CommandResult one = run_lockscope({"report", set + "/2", "-f", "csv"});
  EXPECT_EQ(one.exit_status, 0) << one.err;

  const CommandResult run = run_lockscope({"run", "--repeat", "2", "-o", dir / "other", "-f", "csv",
                                           "--", fixture("counter_threads"), "1", "10"});
  expect_error(run, "/K -f csv");
  EXPECT_FALSE(fs::exists(dir / "other")) << "the program ran";
}

// On a terminal: one progress line rewritten in place, erased at the end; no line per run.
TEST(RepeatedRuns, ATerminalShowsOneProgressLine) {
  TemporaryDirectory dir;
  TerminalCommand command =
      start_on_terminal({LOCKSCOPE_CLI, "record", "--repeat", "3", "-o", dir / "set", "--",
                         fixture("counter_threads"), "1", "10"},
                        dir, /*stderr_on_terminal=*/true);
  bool timed_out = false;
  const CommandResult result = finish_on_terminal(command, 60, &timed_out);
  ASSERT_FALSE(timed_out);
  EXPECT_EQ(result.exit_status, 0) << result.out;
  for (const char* run : {"run 1/3 …", "run 2/3 …", "run 3/3 …"})
    EXPECT_NE(result.out.find(std::string("\r\033[Klockscope: ") + run), std::string::npos)
        << result.out;
  EXPECT_EQ(result.out.find("exit status 0 in"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("\r\033[Klockscope: 3 runs written to"), std::string::npos)
      << result.out;
}

}  // namespace
}  // namespace lockscope::testing
