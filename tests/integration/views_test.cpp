// The machine formats of real profiles (collapsed, speedscope, csv), each checked against what
// the JSON report of the same profile says: totals equal to the lock-wait (hold) totals, the
// fixture's functions in the stacks in call order, every lock and site row with its figures.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

using nlohmann::json;

json json_report(const std::string& directory) {
  const CommandResult run = run_lockscope({"report", directory, "-f", "json"});
  EXPECT_EQ(run.exit_status, 0) << run.err;
  return json::parse(run.out);
}

bool is_lock(const json& lock) {
  return lock["primitive"] == "mutex" || lock["primitive"] == "rwlock";
}

// The lock-wait (or hold) total of each pid, as the JSON report says.
std::map<uint64_t, uint64_t> totals_by_pid(const json& report, const char* what) {
  std::map<uint64_t, uint64_t> totals;
  for (const json& process : report["processes"])
    for (const json& lock : process["locks"])
      if (is_lock(lock)) totals[process["pid"]] += lock[what]["sum_ns"].get<uint64_t>();
  return totals;
}

struct FoldedLine {
  std::vector<std::string> frames;
  uint64_t value = 0;
};

std::vector<FoldedLine> folded(const std::string& text) {
  std::vector<FoldedLine> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t space = line.rfind(' ');
    EXPECT_NE(space, std::string::npos) << line;
    FoldedLine parsed;
    parsed.value = std::stoull(line.substr(space + 1));
    std::istringstream frames(line.substr(0, space));
    for (std::string frame; std::getline(frames, frame, ';');) parsed.frames.push_back(frame);
    lines.push_back(parsed);
  }
  return lines;
}

// Folded lines' sums by the pid of their root frame "pid N (...)".
std::map<uint64_t, uint64_t> folded_totals(const std::vector<FoldedLine>& lines) {
  std::map<uint64_t, uint64_t> totals;
  for (const FoldedLine& line : lines)
    totals[std::stoull(line.frames.front().substr(4))] += line.value;
  return totals;
}

std::string collapsed(const std::string& directory, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"report", directory, "-f", "collapsed"};
  args.insert(args.end(), extra.begin(), extra.end());
  const CommandResult run = run_lockscope(args);
  EXPECT_EQ(run.exit_status, 0) << run.err;
  return run.out;
}

size_t position_of(const std::vector<std::string>& frames, const std::string& function) {
  for (size_t i = 0; i < frames.size(); ++i)
    if (frames[i].rfind(function + " ", 0) == 0) return i;
  return frames.size();
}

// wrapped_locks: every wait through take_and_work <- with_lock <- guarded_update <- worker.
TEST(Views, CollapsedStacksAddUpToTheLockWaitTotalsInCallOrder) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "wrapped_locks", {"100"});
  const json report = json_report(dir.path());
  const std::vector<FoldedLine> lines = folded(collapsed(dir.path()));
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(folded_totals(lines), totals_by_pid(report, "wait"));
  const FoundSite wait = find_site(process, "wrapped_locks", "level3", format::Operation::kLock);
  ASSERT_NE(wait.lock, nullptr);
  // The leaf: the lock by its name, here its symbol (a global).
  EXPECT_EQ(wait.lock->name, "shared");
  const std::string leaf = "mutex shared";
  uint64_t through_wrappers = 0;
  for (const FoldedLine& line : lines) {
    EXPECT_EQ(line.frames.front(), fmt::format("pid {} (fixture_wrapped_locks)", process.pid));
    EXPECT_EQ(line.frames.back(), leaf);
    const size_t worker = position_of(line.frames, "worker");
    if (worker == line.frames.size()) continue;
    EXPECT_LT(worker, position_of(line.frames, "guarded_update"));
    EXPECT_LT(position_of(line.frames, "guarded_update"), position_of(line.frames, "with_lock"));
    EXPECT_LT(position_of(line.frames, "with_lock"), position_of(line.frames, "take_and_work"));
    EXPECT_EQ(position_of(line.frames, "take_and_work"), line.frames.size() - 2);
    through_wrappers += line.value;
  }
  // Every wait was captured (stacks_test.cpp): all of the wait is on the whole stack.
  EXPECT_EQ(through_wrappers, wait.site->wait_sum_ns);
  EXPECT_GT(through_wrappers, 0u);

  const std::vector<FoldedLine> holds = folded(collapsed(dir.path(), {"--weight", "hold"}));
  EXPECT_EQ(folded_totals(holds), totals_by_pid(report, "hold"));
  // Holds weigh on the stacks they were released from, through the same wrappers (the unlock is
  // in take_and_work too); those without a captured stack on their acquire site, marked so
  // (pid;(stack not captured);site;lock).
  uint64_t held_through_wrappers = 0, held = 0;
  for (const FoldedLine& line : holds) {
    EXPECT_EQ(line.frames.back(), leaf);
    held += line.value;
    if (line.frames[1] == "(stack not captured)") {
      EXPECT_EQ(line.frames.size(), 4u);
      continue;
    }
    EXPECT_LT(position_of(line.frames, "worker"), position_of(line.frames, "guarded_update"));
    EXPECT_LT(position_of(line.frames, "with_lock"), position_of(line.frames, "take_and_work"));
    EXPECT_EQ(position_of(line.frames, "take_and_work"), line.frames.size() - 2);
    held_through_wrappers += line.value;
  }
  EXPECT_GE(held_through_wrappers * 10, held * 8) << "the hold budget covers 100 us holds";
}

// Without stacks every wait is at its call site; rwlock sides and a mutex's re-acquisitions after
// condition waits are counted, and still add up to the lock-wait totals.
TEST(Views, CollapsedWithoutStacksAndOverEveryLockKindStillAddsUp) {
  TemporaryDirectory off;
  const CommandResult none = run_lockscope(
      {"record", "-o", off.path(), "--stack-depth", "0", "--", fixture("wrapped_locks"), "50"});
  ASSERT_EQ(none.exit_status, 0) << none.err;
  const std::vector<FoldedLine> lines = folded(collapsed(off.path()));
  EXPECT_EQ(folded_totals(lines), totals_by_pid(json_report(off.path()), "wait"));
  // No stack captured: each line is the process, the marker that says so (before, the call site
  // stood right under the process, as if a stack began there), the call site and the lock.
  for (const FoldedLine& line : lines) {
    ASSERT_EQ(line.frames.size(), 4u);
    EXPECT_EQ(line.frames[1], "(stack not captured)");
    EXPECT_EQ(line.frames[2].rfind("take_and_work ", 0), 0u) << line.frames[2];
  }
  for (const char* name : {"rwlock_sides", "condvar_split"}) {
    TemporaryDirectory dir;
    record_unchanged(dir, name);
    const std::string text = collapsed(dir.path());
    const std::map<uint64_t, uint64_t> expected = totals_by_pid(json_report(dir.path()), "wait");
    EXPECT_EQ(folded_totals(folded(text)), expected) << name << ":\n" << text;
  }
}

TEST(Views, SpeedscopeProfilesWeighTheLockWaitsOfEachProcess) {
  TemporaryDirectory dir;
  record_unchanged(dir, "wrapped_locks", {"100"});
  const CommandResult run = run_lockscope({"report", dir.path(), "-o", dir / "p.speedscope.json"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  const json document = json::parse(slurp(dir / "p.speedscope.json"));
  const json report = json_report(dir.path());
  EXPECT_EQ(document["$schema"], "https://www.speedscope.app/file-format-schema.json");
  const json& frames = document["shared"]["frames"];
  ASSERT_EQ(document["profiles"].size(), report["processes"].size());
  std::map<uint64_t, uint64_t> totals;
  std::string names;
  for (size_t p = 0; p < document["profiles"].size(); ++p) {
    const json& profile = document["profiles"][p];
    const uint64_t pid = report["processes"][p]["pid"];
    EXPECT_EQ(profile["type"], "sampled");
    EXPECT_EQ(profile["unit"], "nanoseconds");
    EXPECT_EQ(profile["startValue"], 0);
    ASSERT_EQ(profile["samples"].size(), profile["weights"].size());
    uint64_t sum = 0;
    for (size_t s = 0; s < profile["samples"].size(); ++s) {
      sum += profile["weights"][s].get<uint64_t>();
      for (const json& index : profile["samples"][s]) {
        ASSERT_LT(index.get<size_t>(), frames.size());
        names += frames[index.get<size_t>()]["name"].get<std::string>() + "\n";
      }
    }
    EXPECT_EQ(profile["endValue"], sum);
    totals[pid] = sum;
  }
  EXPECT_EQ(totals, totals_by_pid(report, "wait"));
  for (const char* function : {"take_and_work ", "with_lock ", "guarded_update ", "worker "})
    EXPECT_NE(names.find(function), std::string::npos) << function << " not in\n" << names;
}

// RFC 4180 records (quoted fields with commas, doubled quotes; CRLF).
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted && c == '"' && i + 1 < text.size() && text[i + 1] == '"')
      rows.back().back() += text[++i];
    else if (c == '"')
      quoted = !quoted;
    else if (!quoted && c == ',')
      rows.back().emplace_back();
    else if (!quoted && c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;
      rows.emplace_back(1);
    } else
      rows.back().back() += c;
  }
  if (rows.back() == std::vector<std::string>(1)) rows.pop_back();
  return rows;
}

std::map<std::string, std::string> record(const std::vector<std::string>& header,
                                          const std::vector<std::string>& row) {
  EXPECT_EQ(header.size(), row.size());
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < header.size() && i < row.size(); ++i) out[header[i]] = row[i];
  return out;
}

TEST(Views, CsvTablesHoldTheJsonReportsFigures) {
  TemporaryDirectory dir;
  record_unchanged(dir, "rwlock_sides");
  const json report = json_report(dir.path());
  const CommandResult locks_run =
      run_lockscope({"report", dir.path(), "-o", dir / "t.csv", "--all"});
  ASSERT_EQ(locks_run.exit_status, 0) << locks_run.err;
  const auto locks = parse_csv(slurp(dir / "t.csv"));
  const CommandResult sites_run =
      run_lockscope({"report", dir.path(), "-f", "csv", "--table", "sites", "--all"});
  ASSERT_EQ(sites_run.exit_status, 0) << sites_run.err;
  const auto sites = parse_csv(sites_run.out);
  ASSERT_GE(locks.size(), 2u);
  ASSERT_GE(sites.size(), 2u);
  // Wait totals by (address, side); an rwlock used from both sides has a row per side.
  std::map<std::string, uint64_t> lock_wait, site_wait;
  size_t json_sites = 0;
  for (size_t r = 1; r < locks.size(); ++r) {
    auto row = record(locks[0], locks[r]);
    lock_wait[row["address"] + row["side"]] += std::stoull(row["wait_ns"]);
  }
  for (size_t r = 1; r < sites.size(); ++r) {
    auto row = record(sites[0], sites[r]);
    site_wait[row["address"] + row["side"]] += std::stoull(row["wait_ns"]);
  }
  for (const json& process : report["processes"])
    for (const json& lock : process["locks"]) {
      const std::string address = fmt::format("0x{:x}", lock["address"].get<uint64_t>());
      json_sites += lock["sites"].size();
      const bool sides = lock.contains("read") && lock["read"]["acquisitions"] > 0 &&
                         lock["write"]["acquisitions"] > 0;
      for (const std::string& side :
           sides ? std::vector<std::string>{"read", "write"} : std::vector<std::string>{""}) {
        const json& figures = side.empty() ? lock : lock[side];
        EXPECT_EQ(lock_wait[address + side], figures["wait"]["sum_ns"].get<uint64_t>())
            << address << side;
      }
    }
  EXPECT_EQ(sites.size() - 1, json_sites);
  EXPECT_EQ(lock_wait, site_wait);  // the site rows add up to their lock rows
  EXPECT_NE(locks[0].end(), std::find(locks[0].begin(), locks[0].end(), "hold_max_ns"));
}

TEST(Views, BadFormatsAndOutputsAreOneLineErrors) {
  TemporaryDirectory dir;
  record_unchanged(dir, "counter_threads");
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"-f", "nosuch"},
                                             {"-o", "/dev/null/x.collapsed"},
                                             {"-f", "json", "--weight", "hold"},
                                             {"-f", "collapsed", "--table", "sites"},
                                             {"--weight", "cpu", "-f", "collapsed"}}) {
    std::vector<std::string> command = {"report", dir.path()};
    command.insert(command.end(), args.begin(), args.end());
    const CommandResult run = run_lockscope(command);
    EXPECT_EQ(run.exit_status, 125) << args[1] << ": " << run.err;
    EXPECT_EQ(run.err.rfind("lockscope: error: ", 0), 0u) << run.err;
    EXPECT_TRUE(run.out.empty()) << run.out;
  }
  const CommandResult unwritable = run_lockscope({"report", dir.path(), "-o", "/dev/null/x.csv"});
  EXPECT_NE(unwritable.err.find("cannot write the report to '/dev/null/x.csv': Not a directory"),
            std::string::npos)
      << unwritable.err;
  const CommandResult help = run_lockscope({"report", "--help"});
  for (const char* line : {"collapsed", ".speedscope.json", "--weight", "--table"})
    EXPECT_NE(help.out.find(line), std::string::npos) << line << " not in\n" << help.out;
}

}  // namespace
}  // namespace lockscope::testing
