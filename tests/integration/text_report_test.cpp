// The text report's tables, read as a user reads them and checked against the JSON report of the
// same profile: the threads table limited by --top, its FAILED and OF RUN columns, the locks
// listed apart from condition variables, semaphores and barriers, --sort keys that are the
// column titles.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/duration_format.h"
#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

using nlohmann::json;

std::string report_text(const std::string& directory, std::vector<std::string> options = {}) {
  options.insert(options.begin(), {"report", directory});
  const CommandResult run = run_lockscope(options);
  EXPECT_EQ(run.exit_status, 0) << run.err;
  return run.out;
}

json report_json(const std::string& directory) {
  return json::parse(report_text(directory, {"-f", "json"}));
}

std::vector<std::string> split_words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// The lines of the section whose title starts with `title`: its title, its header, its rows (up
// to the blank line that ends it).
std::vector<std::string> section(const std::string& text, const std::string& title) {
  std::vector<std::string> lines;
  const size_t at = text.find("*** " + title);
  if (at == std::string::npos) return lines;
  std::istringstream in(text.substr(at));
  for (std::string line; std::getline(in, line) && !line.empty();) lines.push_back(line);
  return lines;
}

// The headers of more than one word as one ("LOCK_WAIT"), a thread's " (main)" with its name.
std::string joined(std::string line, bool header) {
  const std::vector<std::string> spaced =
      header ? std::vector<std::string>{"LOCK WAIT", "OF RUN",       "WAIT MAX",
                                        "ENDED BY",  "SPIN (CPU)",   "COND WAIT",
                                        "SEM WAIT",  "BARRIER WAIT", "WAIT TOTAL"}
             : std::vector<std::string>{" (main)"};
  for (const std::string& words : spaced)
    for (size_t at; (at = line.find(words)) != std::string::npos;) {
      std::string one = words;
      std::replace(one.begin(), one.end(), ' ', '_');
      line.replace(at, words.size(), header ? one : one.substr(1));
      if (!header) line.insert(at, "_");
    }
  return line;
}

// A table's cell: the column named `header` ("LOCK_WAIT" for LOCK WAIT), of row `row`.
std::string cell(const std::vector<std::string>& table, size_t row, const std::string& header) {
  const std::vector<std::string> headers = split_words(joined(table[1], true));
  const auto column = std::find(headers.begin(), headers.end(), header);
  EXPECT_NE(column, headers.end()) << header << " in " << table[1];
  const std::vector<std::string> cells = split_words(joined(table[row], false));
  const size_t index = static_cast<size_t>(column - headers.begin());
  return index < cells.size() ? cells[index] : "";
}

std::string percent(uint64_t ns, uint64_t run_ns) {
  const double value = 100.0 * double(ns) / double(run_ns);
  return ns > 0 && value < 0.1 ? "<0.1%" : fmt::format("{:.1f}%", value);
}

// The note that holds were sampled and scaled comes only when one was: a run whose sites all stayed
// within their first 32 timed holds has every hold timed (before, the note came with every run).
TEST(TextReport, TheHoldSamplingNoteComesOnlyWhenAHoldWasSampled) {
  const std::string note = "timed 1 in 32 and scaled";
  for (const bool sampled : {false, true}) {
    TemporaryDirectory dir;
    const std::vector<std::string> args = {fixture("counter_threads"), "2", sampled ? "500" : "10"};
    record_all_unchanged(dir, args);
    const CommandResult text = run_lockscope({"report", dir.path()});
    ASSERT_EQ(text.exit_status, 0) << text.err;
    EXPECT_EQ(text.out.find(note) != std::string::npos, sampled) << text.out;
  }
}

TEST(TextReport, TheThreadsTableListsTheTopThreadsByLockWaitAndCountsTheRest) {
  TemporaryDirectory dir;
  record_unchanged(dir, "many_threads", {"100"});
  const json report = report_json(dir.path());
  const json& threads = report["processes"][0]["threads"];
  ASSERT_EQ(threads.size(), 101u);
  // The top 5 by lock wait, ties by acquisitions, in the profile's order.
  std::vector<size_t> order(threads.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const uint64_t wa = threads[a]["wait"]["sum_ns"], wb = threads[b]["wait"]["sum_ns"];
    if (wa != wb) return wa > wb;
    return threads[a]["acquisitions"].get<uint64_t>() > threads[b]["acquisitions"].get<uint64_t>();
  });
  const std::string text = report_text(dir.path(), {"--top", "5"});
  const std::vector<std::string> table = section(text, "threads present");
  ASSERT_EQ(table.size(), 2u + 5u + 1u) << text;
  EXPECT_EQ(table[0], "*** threads present: 5 of 101 by LOCK WAIT ***");
  for (size_t r = 0; r < 5; ++r)
    EXPECT_EQ(cell(table, 2 + r, "TID"), std::to_string(threads[order[r]]["tid"].get<uint32_t>()));
  EXPECT_EQ(table.back(), "(96 more threads: --top N lists more, --all every one)");
  const std::vector<std::string> all = section(report_text(dir.path(), {"--all"}), "threads");
  EXPECT_EQ(all[0], "*** threads present ***");
  EXPECT_EQ(all.size(), 2u + 101u);
}

// FAILED: the thread's failed calls (trylocks that found the lock busy, timed-out locks); OF RUN:
// its lock wait over the process's run, and the process's over its run.
TEST(TextReport, ThreadsHaveAFailedColumnAndEachLockWaitIsShownAsAShareOfTheRun) {
  TemporaryDirectory dir;
  record_unchanged(dir, "mutex_semantics");
  const json process = report_json(dir.path())["processes"][0];
  const uint64_t run_ns = process["duration_ns"];
  // FAILED is a column of --wide's (the default table fits 120 columns).
  const std::string text = report_text(dir.path(), {"--all", "--wide"});
  const std::vector<std::string> threads = section(text, "threads present");
  ASSERT_EQ(threads.size(), 2u + process["threads"].size()) << text;
  uint64_t failed = 0;
  for (size_t r = 0; r < process["threads"].size(); ++r) {
    const json& thread = process["threads"][r];
    EXPECT_EQ(cell(threads, 2 + r, "FAILED"), fmt::format("{}", thread["failed"].get<uint64_t>()));
    EXPECT_EQ(cell(threads, 2 + r, "OF_RUN"), percent(thread["wait"]["sum_ns"], run_ns));
    failed += thread["failed"].get<uint64_t>();
  }
  EXPECT_GE(failed, 3u) << "the fixture's three busy trylocks at least";
  uint64_t lock_wait = 0;
  for (const json& lock : process["locks"])
    if (lock["primitive"] == "mutex" || lock["primitive"] == "rwlock")
      lock_wait += lock["wait"]["sum_ns"].get<uint64_t>();
  const std::vector<std::string> processes = section(text, "processes present");
  ASSERT_EQ(processes.size(), 3u);
  EXPECT_NE(processes[2].find("  " + percent(lock_wait, run_ns) + "  "), std::string::npos)
      << processes[1] << '\n'
      << processes[2];
}

// The processes table adds up its threads' figures: a spinlock's 2,000 acquisitions (and its
// contended ones) count in both tables, not in the threads' only.
TEST(TextReport, AProcessRowAddsUpItsThreadsRows) {
  TemporaryDirectory dir;
  record_unchanged(dir, "spin_counter", {"1000"});
  const std::string text = report_text(dir.path(), {"--all"});
  const std::vector<std::string> threads = section(text, "threads present");
  const std::vector<std::string> processes = section(text, "processes present");
  ASSERT_EQ(processes.size(), 3u) << text;
  auto number = [](std::string cell) {
    std::erase(cell, ',');
    return std::stoull(cell);
  };
  uint64_t acquired = 0, contended = 0;
  for (size_t r = 2; r < threads.size(); ++r) {
    acquired += number(cell(threads, r, "ACQUIRED"));
    contended += number(cell(threads, r, "CONTENDED"));
  }
  EXPECT_GE(acquired, 2000u) << text;
  EXPECT_GE(contended, 1u) << "the spinner that burns CPU while main holds the lock";
  // PID PPID "exit 0" DURATION THREADS LOCKS ACQUIRED CONTENDED "LOCK WAIT" ...
  std::istringstream row(processes[2]);
  std::vector<std::string> cells{std::istream_iterator<std::string>(row), {}};
  ASSERT_GE(cells.size(), 10u) << text;
  ASSERT_EQ(cells[2] + " " + cells[3], "exit 0") << text;
  EXPECT_EQ(number(cells[7]), acquired) << text;
  EXPECT_EQ(number(cells[8]), contended) << text;
  EXPECT_EQ(cells[9], "0") << "spinning is not a lock wait: " << text;
}

// A condition variable's waits are idle time (a thread waiting for work), seconds on a server:
// they never push the locks out of the top --top, they are listed in a table of their own.
TEST(TextReport, ConditionVariablesAreListedApartAndNeverPushTheLocksOut) {
  TemporaryDirectory dir;
  record_unchanged(dir, "condvar_wakeups", {"5"});
  const std::string text = report_text(dir.path(), {"--top", "1"});
  const std::vector<std::string> locks = section(text, "locks present");
  ASSERT_EQ(locks.size(), 3u) << text;
  EXPECT_EQ(locks[0].rfind("*** locks present: 1 of ", 0), 0u) << locks[0];
  EXPECT_EQ(cell(locks, 2, "KIND"), "mutex") << text;
  const std::vector<std::string> others =
      section(text, "condition variables, semaphores and barriers");
  ASSERT_EQ(others.size(), 3u) << text;
  EXPECT_EQ(others[0].rfind("*** condition variables, semaphores and barriers: 1 of ", 0), 0u);
  EXPECT_EQ(cell(others, 2, "KIND"), "condvar") << text;
  // Both lists' locks have their call sites.
  EXPECT_NE(text.find("condvar  waits "), std::string::npos) << text;
  EXPECT_NE(text.find("mutex  acquired"), std::string::npos) << text;
}

TEST(TextReport, SortKeysAreTheColumnTitles) {
  TemporaryDirectory dir;
  record_unchanged(dir, "counter_threads");
  const std::string by_handoffs = report_text(dir.path(), {"--sort", "handoffs"});
  EXPECT_NE(by_handoffs.find("by HANDOFFS ***"), std::string::npos) << by_handoffs;
  // The keys of earlier versions still work, and mean the same column.
  EXPECT_EQ(report_text(dir.path(), {"--sort", "owner-changes"}), by_handoffs);
  const std::string by_acquired = report_text(dir.path(), {"--sort", "acquired"});
  EXPECT_NE(by_acquired.find("by ACQUIRED ***"), std::string::npos);
  EXPECT_NE(report_text(dir.path(), {"--sort", "le-1us"}).find("by ≤1µs ***"), std::string::npos);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

size_t columns_of(const std::string& line) {  // code points: "µ", "≤", "…" are one column each
  return static_cast<size_t>(std::count_if(line.begin(), line.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

// A real profile's first screen: within 80 columns and 40 lines, the verdict first with the
// fixture's own figure (ROUNDS waits of some 2 ms on slow_mutex, named as the source names it),
// the same screen that opens the full report, whose tables keep within 120 columns and whose
// stacks are each printed once.
TEST(TextReport, TheFirstScreenOfARealProfileNamesTheLockItsThreadsWaitedFor) {
  TemporaryDirectory dir;
  constexpr int kRounds = 20;
  const ProcessProfile process = record_unchanged(dir, "sleepy_holder", {std::to_string(kRounds)});
  const std::string brief = report_text(dir.path(), {"--brief"});
  const std::vector<std::string> lines = lines_of(brief);
  ASSERT_GE(lines.size(), 4u) << brief;
  EXPECT_LE(lines.size(), 40u) << brief;
  for (const std::string& line : lines) EXPECT_LE(columns_of(line), 80u) << line;
  EXPECT_EQ(lines[0], fmt::format("lockscope report of {}: 1 process, 2 threads", dir.path()));
  EXPECT_EQ(lines[2].rfind("verdict: lock waits are ", 0), 0u) << brief;
  uint64_t slow_wait_ns = 0;
  for (const LockSummary& lock : process.locks)
    if (lock.name == "slow_mutex") slow_wait_ns = lock.wait_sum_ns;
  EXPECT_GE(slow_wait_ns, kRounds * 2 * kMs) << "the fixture's holds were all waited for";
  // The verdict's last figure: the top lock's wait, and the lock by its variable's name.
  std::string unwrapped = brief;
  for (size_t at; (at = unwrapped.find("\n         ")) != std::string::npos;)
    unwrapped.replace(at, 10, " ");
  EXPECT_NE(unwrapped.find(fmt::format("{} of it on mutex slow_mutex\n",
                                       format_duration_ns(double(slow_wait_ns)))),
            std::string::npos)
      << brief;
  EXPECT_EQ(brief.find("***"), std::string::npos) << "--brief has no table:\n" << brief;

  const std::string full = report_text(dir.path());
  EXPECT_EQ(full.rfind(brief, 0), 0u) << "the full report opens with the same screen\n" << full;
  for (const std::string& line : lines_of(full)) EXPECT_LE(columns_of(line), 120u) << line;
  EXPECT_NE(full.find("\nslow_mutex  mutex  acquired "), std::string::npos) << full;
  EXPECT_EQ(full.find("legend:"), std::string::npos) << full;
  // Each stack's frames once: every "stack #N" after its first is a reference.
  for (int id = 1; full.find(fmt::format("stack #{}\n", id)) != std::string::npos; ++id) {
    const size_t first = full.find(fmt::format(": stack #{}\n", id));
    EXPECT_EQ(full.find(fmt::format(": stack #{}\n", id), first + 1), std::string::npos)
        << "stack #" << id << " printed twice\n"
        << full;
  }
}

}  // namespace
}  // namespace lockscope::testing
