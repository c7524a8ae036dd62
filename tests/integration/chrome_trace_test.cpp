// The chrome format (Trace Event JSON) of a traced fixture, parsed and checked for the structure
// Perfetto and chrome://tracing read: complete events with their fields, one per contended wait of
// the trace, one per hold on the lock's named track, flow arrows whose starts and finishes pair up
// inside the slices they bind to, and names for the process and every thread. Without a trace:
// a one-line error and no file.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

using nlohmann::json;

// A slice of `events` on (pid, tid) that encloses `ts`, 1 ns inside its ends.
bool enclosed(const std::vector<json>& slices, uint64_t tid, double ts) {
  for (const json& slice : slices) {
    const double begin = slice["ts"], dur = slice["dur"];
    if (slice["tid"] == tid && begin <= ts && ts < begin + dur) return true;
  }
  return false;
}

// sleepy_holder 20: the main thread holds the mutex 2 ms, 20 times, while the waiter waits for
// it; each wait ends with the main thread's release.
TEST(ChromeTrace, WaitsHoldsAndHandoffsOfATracedRun) {
  TemporaryDirectory dir;
  const ProcessProfile process =
      record_unchanged(dir, "sleepy_holder", {"20"}, {"--trace", "--hold-sample", "1"});
  ASSERT_TRUE(process.trace.present);
  const CommandResult run = run_lockscope({"report", dir.path(), "-o", dir / "x.trace.json"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  const json document = json::parse(slurp(dir / "x.trace.json"));
  EXPECT_EQ(document["displayTimeUnit"], "ns");
  ASSERT_TRUE(document["traceEvents"].is_array());

  uint64_t contended = 0;  // the trace's contended waits
  for (const TraceRecord& event : process.trace.events)
    if (event.kind == format::TraceKind::kCall && (event.flags & format::kTraceWaited)) ++contended;
  const FoundSite wait =
      find_site(process, "sleepy_holder", "waiter-lock", format::Operation::kLock);
  ASSERT_NE(wait.lock, nullptr);
  const std::string lock = fmt::format("mutex 0x{:x}", wait.lock->address);

  std::vector<json> waits, holds;
  std::map<uint64_t, json> starts, finishes;
  std::map<uint64_t, std::string> thread_names;
  std::string process_name;
  for (const json& event : document["traceEvents"]) {
    ASSERT_TRUE(event.contains("ph") && event.contains("pid") && event.contains("name")) << event;
    EXPECT_EQ(event["pid"], process.pid);
    const std::string ph = event["ph"];
    if (ph == "X") {
      for (const char* key : {"ts", "dur", "pid", "tid", "name", "cat"})
        ASSERT_TRUE(event.contains(key)) << key << " missing: " << event;
      EXPECT_GE(event["dur"].get<double>(), 0.0);
      (event["cat"] == "wait" ? waits : holds).push_back(event);
    } else if (ph == "s" || ph == "f") {
      ASSERT_TRUE(event.contains("id") && event.contains("ts") && event.contains("tid")) << event;
      auto& side = ph == "s" ? starts : finishes;
      EXPECT_TRUE(side.emplace(event["id"].get<uint64_t>(), event).second) << "id twice: " << event;
      if (ph == "f") {
        EXPECT_EQ(event["bp"], "e");
      }
    } else if (ph == "M" && event["name"] == "thread_name") {
      thread_names[event["tid"]] = event["args"]["name"];
    } else if (ph == "M" && event["name"] == "process_name") {
      process_name = event["args"]["name"];
    } else {
      EXPECT_EQ(ph, "M") << event;
    }
  }
  EXPECT_EQ(process_name, fmt::format("pid {} (fixture_sleepy_holder)", process.pid));
  // Every wait: 20, on the waiter's thread, each at least the 2 ms hold.
  EXPECT_EQ(waits.size(), contended);
  EXPECT_EQ(waits.size(), 20u);
  std::set<uint64_t> waiting_threads;
  double waited_us = 0;
  for (const json& event : waits) {
    waiting_threads.insert(event["tid"].get<uint64_t>());
    EXPECT_EQ(event["name"], "wait " + lock);
    EXPECT_GE(event["dur"].get<double>(), 2000.0);
    waited_us += event["dur"].get<double>();
  }
  ASSERT_EQ(waiting_threads.size(), 1u);
  const uint64_t waiter = *waiting_threads.begin();
  EXPECT_NE(waiter, process.pid);
  for (const ThreadSummary& thread : process.threads)
    if (thread.tid == waiter) {
      // Slices are drawn from the times (ns since the start), wait_ns from the ticks: each within
      // 2 ns of the other.
      EXPECT_NEAR(waited_us * 1000, double(thread.wait_sum_ns), 2.0 * 20);
    }
  // Every hold of the mutex (both threads', 40) on one track named after it.
  std::set<uint64_t> hold_tracks;
  for (const json& event : holds)
    if (thread_names[event["tid"]] == lock) hold_tracks.insert(event["tid"].get<uint64_t>());
  ASSERT_EQ(hold_tracks.size(), 1u);
  const uint64_t track = *hold_tracks.begin();
  EXPECT_EQ(
      std::count_if(holds.begin(), holds.end(), [&](const json& e) { return e["tid"] == track; }),
      int64_t(wait.lock->acquisitions));
  EXPECT_EQ(wait.lock->acquisitions, 40u);
  // Every wait ended at the main thread's release: an arrow from inside its hold to the end of
  // the wait, each start with its finish.
  EXPECT_EQ(starts.size(), 20u);
  for (const auto& [id, start] : starts) {
    ASSERT_TRUE(finishes.count(id)) << "no finish for " << start;
    const json& finish = finishes[id];
    EXPECT_EQ(start["tid"], track);
    EXPECT_EQ(finish["tid"], waiter);
    EXPECT_TRUE(enclosed(holds, track, start["ts"])) << start;
    EXPECT_TRUE(enclosed(waits, waiter, finish["ts"])) << finish;
    EXPECT_LE(start["ts"].get<double>(), finish["ts"].get<double>());
  }
  EXPECT_EQ(finishes.size(), starts.size());
  // Names for the process's threads (both traced) and the lock's track.
  EXPECT_EQ(thread_names.size(), 3u);
  EXPECT_TRUE(thread_names.count(process.pid));
  EXPECT_TRUE(thread_names.count(waiter));
}

TEST(ChromeTrace, AProfileWithoutATraceIsAOneLineError) {
  TemporaryDirectory dir;
  record_unchanged(dir, "sleepy_holder", {"2"});
  const CommandResult run = run_lockscope({"report", dir.path(), "-o", dir / "x.trace.json"});
  EXPECT_EQ(run.exit_status, 125);
  EXPECT_EQ(run.err,
            "lockscope: error: the chrome format draws traced events, and this profile "
            "has none: record it with `lockscope record --trace`\n");
  EXPECT_FALSE(std::filesystem::exists(dir / "x.trace.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "x.trace.json.tmp"));
  const CommandResult to_stdout = run_lockscope({"report", dir.path(), "-f", "chrome"});
  EXPECT_EQ(to_stdout.exit_status, 125);
  EXPECT_TRUE(to_stdout.out.empty()) << to_stdout.out;
}

}  // namespace
}  // namespace lockscope::testing
