// The SQLite report of real profiles, read back with the real sqlite3 CLI (Debian's sqlite3) by the
// queries a user would write, each checked against the figures of the same profile: the JSON
// report's counts per lock, the fixtures' known waits, the captured stacks in call order, and the
// traced events per thread and second.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

using nlohmann::json;

constexpr const char* kSqlite3 = "/usr/bin/sqlite3";

// The rows `sql` gives, each split at '|' (sqlite3's list mode).
std::vector<std::vector<std::string>> query(const std::string& db, const std::string& sql) {
  const CommandResult run = run_command({kSqlite3, "-batch", "-bail", db, sql});
  EXPECT_EQ(run.exit_status, 0) << sql << "\n" << run.err;
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> row(1);
    for (char c : line) {
      if (c == '|')
        row.emplace_back();
      else
        row.back().push_back(c);
    }
    rows.push_back(row);
  }
  return rows;
}

uint64_t number(const std::string& text) {
  return std::stoull(text);
}

std::string write_db(const TemporaryDirectory& dir, const std::string& name = "prof.db") {
  const CommandResult run = run_lockscope({"report", dir.path(), "-o", dir / name});
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;
  EXPECT_FALSE(std::filesystem::exists(dir / (name + ".tmp")));
  return dir / name;
}

TEST(SqliteReport, CountsPerLockAndSiteEqualTheJsonReports) {
  TemporaryDirectory dir;
  record_unchanged(dir, "rwlock_sides");
  const std::string db = write_db(dir);
  const CommandResult json_run = run_lockscope({"report", dir.path(), "-f", "json"});
  ASSERT_EQ(json_run.exit_status, 0) << json_run.err;
  const json report = json::parse(json_run.out);
  std::map<std::string, std::vector<uint64_t>> expected, sites_expected;
  for (const json& process : report["processes"])
    for (const json& lock : process["locks"]) {
      const std::string key =
          fmt::format("{}/0x{:x}#{}", process["pid"].get<uint64_t>(),
                      lock["address"].get<uint64_t>(), lock["generation"].get<uint32_t>());
      expected[key] = {lock["acquisitions"], lock["releases"],       lock["contended"],
                       lock["failed"],       lock["wait"]["sum_ns"], lock["hold"]["sum_ns"],
                       lock["owner_changes"]};
      uint64_t calls = 0, wait_ns = 0;
      for (const json& site : lock["sites"]) {
        calls += site["count"].get<uint64_t>();
        if (site.contains("wait")) wait_ns += site["wait"]["sum_ns"].get<uint64_t>();
      }
      sites_expected[key] = {lock["sites"].size(), calls, wait_ns};
    }
  ASSERT_GE(expected.size(), 2u);
  std::map<std::string, std::vector<uint64_t>> found, sites_found;
  for (const auto& row : query(db,
                               "SELECT p.pid || '/' || l.address_hex || '#' || l.generation, "
                               "acquisitions, releases, contended, failed, wait_ns, hold_ns, "
                               "owner_changes FROM locks l JOIN processes p USING (process_id)"))
    for (size_t i = 1; i < row.size(); ++i) found[row[0]].push_back(number(row[i]));
  for (const auto& row :
       query(db,
             "SELECT p.pid || '/' || l.address_hex || '#' || l.generation, COUNT(s.site_id), "
             "TOTAL(s.count), TOTAL(s.wait_ns) FROM locks l JOIN processes p USING "
             "(process_id) LEFT JOIN sites s USING (lock_id) GROUP BY l.lock_id"))
    for (size_t i = 1; i < row.size(); ++i)
      sites_found[row[0]].push_back(uint64_t(std::stod(row[i])));
  EXPECT_EQ(found, expected);
  EXPECT_EQ(sites_found, sites_expected);
}

// sleepy_holder: the waiter waits 20 times, 2 ms or more each; the main thread never waits.
TEST(SqliteReport, WaitsPerThreadAreTheFixturesWaits) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "sleepy_holder", {"20"});
  const auto rows = query(write_db(dir),
                          "SELECT tid, main, contended, lock_wait_ns, "
                          "mutex_wait_ns FROM threads ORDER BY main DESC");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][1], "1");
  EXPECT_EQ(rows[0][2], "0");
  EXPECT_EQ(rows[0][3], "0");
  EXPECT_EQ(rows[1][2], "20");
  EXPECT_GE(number(rows[1][3]), 20 * 2 * kMs);
  EXPECT_EQ(rows[1][3], rows[1][4]) << "every lock wait was for the mutex";
  for (const ThreadSummary& thread : process.threads)
    if (std::to_string(thread.tid) == rows[1][0]) {
      EXPECT_EQ(number(rows[1][3]), thread.wait_sum_ns);
    }
}

// A process that exec'd a static program through PATH: the database names the program as named,
// the file the search found, and why it was not profiled (as the JSON and text reports do); a
// process that did not end by exec has NULL there.
TEST(SqliteReport, AnExecdStaticProgramIsNamedWithItsFileAndWhyItWasNotProfiled) {
  TemporaryDirectory dir;
  const std::string fixtures = std::filesystem::path(fixture("static_program")).parent_path();
  const CommandResult run = run_lockscope(
      {"record", "-o", dir.path(), "--", "/usr/bin/env", "PATH=" + fixtures + ":/usr/bin:/bin",
       fixture("exec_program"), "fixture_static_program", dir / "ran"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  const auto rows = query(write_db(dir),
                          "SELECT ended_by, exec_target, exec_file, exec_not_profiled, "
                          "exec_file IS NULL FROM processes ORDER BY process_id");
  ASSERT_EQ(rows.size(), 1u) << "env exec'd the profiled exec_program, which exec'd the static one";
  ASSERT_EQ(rows[0].size(), 5u);
  EXPECT_EQ(rows[0][0], "exec");
  EXPECT_EQ(rows[0][1], "fixture_static_program");
  EXPECT_EQ(rows[0][2], fixture("static_program"));
  EXPECT_EQ(rows[0][3], fixture("static_program") + " is statically linked");

  TemporaryDirectory plain;
  record_unchanged(plain, "sleepy_holder", {"1"});
  const auto none =
      query(write_db(plain), "SELECT exec_file IS NULL, exec_not_profiled IS NULL FROM processes");
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0], (std::vector<std::string>{"1", "1"}));
}

// wrapped_locks: every wait is through take_and_work <- with_lock <- guarded_update <- worker.
TEST(SqliteReport, TopFiveStacksByWaitJoinTheirFramesInCallOrder) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "wrapped_locks", {"100"});
  const std::string db = write_db(dir);
  // What the profile says: wait by stack, over the sites.
  std::map<size_t, uint64_t> wait_by_stack;
  for (const LockSummary& lock : process.locks)
    for (const SiteSummary& site : lock.sites)
      for (const SiteStack& stack : site.stacks) wait_by_stack[stack.stack] += stack.wait_ns;
  ASSERT_FALSE(wait_by_stack.empty());
  std::vector<uint64_t> expected;
  for (const auto& [stack, wait_ns] : wait_by_stack) expected.push_back(wait_ns);
  std::sort(expected.rbegin(), expected.rend());
  expected.resize(std::min<size_t>(expected.size(), 5));

  const auto top = query(db,
                         "SELECT stack_id, SUM(time_ns) AS wait_ns FROM site_stacks WHERE "
                         "weight = 'wait' GROUP BY stack_id ORDER BY wait_ns DESC LIMIT 5");
  std::vector<uint64_t> found;
  for (const auto& row : top) found.push_back(number(row[1]));
  EXPECT_EQ(found, expected);
  for (const auto& row : top) {
    // The physical frames (the first logical frame of each), innermost first.
    const auto frames =
        query(db, "SELECT MIN(depth), file, line FROM frames WHERE stack_id = " + row[0] +
                      " GROUP BY physical_depth ORDER BY physical_depth");
    std::vector<CodeLocation> locations;
    for (const auto& frame : frames) {
      CodeLocation location;
      location.file = frame[1];
      location.line = frame[2].empty() ? 0 : int(number(frame[2]));
      location.label = frame[1] + ":" + frame[2];
      locations.push_back(location);
    }
    expect_wrapped_locks_stack(locations, "level3");
  }
  // The stacks' frames are the symbolizer's: the innermost, by function name.
  const auto innermost = query(db,
                               "SELECT DISTINCT function FROM frames JOIN site_stacks USING "
                               "(stack_id) WHERE weight = 'wait' AND depth = 0");
  ASSERT_EQ(innermost.size(), 1u);
  EXPECT_EQ(innermost[0][0], "take_and_work");
}

// Traced sleepy_holder: the waiter's 20 waits in the events, by thread and second, as the trace's
// own events count them, adding up to the thread's wait in the tables.
TEST(SqliteReport, TracedWaitsPerThreadPerSecond) {
  TemporaryDirectory dir;
  const ProcessProfile process =
      record_unchanged(dir, "sleepy_holder", {"20"}, {"--trace", "--hold-sample", "1"});
  ASSERT_TRUE(process.trace.present);
  const std::string db = write_db(dir);
  std::map<std::string, uint64_t> expected;  // "tid|second" -> waits
  for (const TraceRecord& event : process.trace.events)
    if (event.kind == format::TraceKind::kCall && (event.flags & format::kTraceWaited))
      ++expected[fmt::format("{}|{}", event.tid, event.time_ns / 1'000'000'000)];
  std::map<std::string, uint64_t> found;
  uint64_t waits = 0;
  for (const auto& row : query(db,
                               "SELECT tid, time_ns / 1000000000 AS second, COUNT(*) FROM "
                               "events WHERE wait_ns IS NOT NULL GROUP BY tid, second"))
    waits += found[row[0] + "|" + row[1]] = number(row[2]);
  EXPECT_EQ(found, expected);
  EXPECT_EQ(waits, 20u);
  const auto per_thread = query(db,
                                "SELECT e.tid, SUM(e.wait_ns), t.lock_wait_ns FROM events e "
                                "JOIN threads t USING (process_id, tid) WHERE e.wait_ns IS NOT "
                                "NULL GROUP BY e.tid");
  ASSERT_EQ(per_thread.size(), 1u);
  EXPECT_EQ(per_thread[0][1], per_thread[0][2]) << "the events' waits are the table's";
  const auto calls = query(db, "SELECT COUNT(*) FROM events");
  EXPECT_EQ(number(calls.at(0).at(0)), process.trace.events.size());
}

TEST(SqliteReport, NeedsAFileAndSaysWhyItCannotWriteOne) {
  TemporaryDirectory dir;
  record_unchanged(dir, "counter_threads");
  const CommandResult to_stdout = run_lockscope({"report", dir.path(), "-f", "sqlite"});
  EXPECT_EQ(to_stdout.exit_status, 125);
  EXPECT_EQ(to_stdout.err,
            "lockscope: error: the sqlite format writes a database file, not a stream, a "
            "device or a FIFO: name a regular file (report -o FILE.db, run --report FILE.db)\n");
  EXPECT_TRUE(to_stdout.out.empty());
  const CommandResult unwritable = run_lockscope({"report", dir.path(), "-o", "/dev/null/x.db"});
  EXPECT_EQ(unwritable.exit_status, 125);
  EXPECT_EQ(unwritable.err.rfind("lockscope: error: cannot write the report to '/dev/null/x.db': "
                                 "Not a directory\n",
                                 0),
            0u)
      << unwritable.err;
  // A database already where it writes (a temporary file left over) is replaced, not added to.
  std::filesystem::copy_file(write_db(dir), dir / "again.sqlite.tmp");
  const std::string db = write_db(dir, "again.sqlite");
  EXPECT_EQ(query(db, "SELECT COUNT(*) FROM processes"),
            (std::vector<std::vector<std::string>>{{"1"}}));
}

}  // namespace
}  // namespace lockscope::testing
