// The chrome format (Trace Event JSON) of a traced fixture, parsed and checked for the structure
// Perfetto and chrome://tracing read: complete events with their fields, one per contended wait of
// the trace, one per hold on the lock's named track, flow arrows whose starts and finishes pair up
// inside the slices they bind to, and names for the process and every thread. Without a trace:
// a one-line error and no file.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

// The events of a chrome file, checked for the fields each kind must have, by kind.
struct ChromeEvents {
  std::vector<json> waits, holds;             // "X" events by category
  std::map<uint64_t, json> starts, finishes;  // flow events by id
  std::map<uint64_t, std::string> thread_names;
  std::string process_name;
  uint64_t contended = 0;  // the trace's contended waits
};

ChromeEvents chrome_events(const TemporaryDirectory& dir, const ProcessProfile& process) {
  ChromeEvents out;
  for (const TraceRecord& event : process.trace.events)
    if (event.kind == format::TraceKind::kCall && (event.flags & format::kTraceWaited))
      ++out.contended;
  const CommandResult run = run_lockscope({"report", dir.path(), "-o", dir / "x.trace.json"});
  EXPECT_EQ(run.exit_status, 0) << run.err;
  const json document = json::parse(slurp(dir / "x.trace.json"));
  EXPECT_EQ(document["displayTimeUnit"], "ns");
  EXPECT_TRUE(document["traceEvents"].is_array());
  for (const json& event : document["traceEvents"]) {
    EXPECT_TRUE(event.contains("ph") && event.contains("pid") && event.contains("name")) << event;
    EXPECT_EQ(event["pid"], process.pid);
    const std::string ph = event["ph"];
    if (ph == "X") {
      for (const char* key : {"ts", "dur", "pid", "tid", "name", "cat"})
        EXPECT_TRUE(event.contains(key)) << key << " missing: " << event;
      EXPECT_GE(event["dur"].get<double>(), 0.0);
      (event["cat"] == "wait" ? out.waits : out.holds).push_back(event);
    } else if (ph == "s" || ph == "f") {
      EXPECT_TRUE(event.contains("id") && event.contains("ts") && event.contains("tid")) << event;
      auto& side = ph == "s" ? out.starts : out.finishes;
      EXPECT_TRUE(side.emplace(event["id"].get<uint64_t>(), event).second) << "id twice: " << event;
      if (ph == "f") {
        EXPECT_EQ(event["bp"], "e");
      }
    } else if (ph == "M" && event["name"] == "thread_name") {
      out.thread_names[event["tid"]] = event["args"]["name"];
    } else if (ph == "M" && event["name"] == "process_name") {
      out.process_name = event["args"]["name"];
    } else {
      EXPECT_EQ(ph, "M") << event;
    }
  }
  return out;
}

// sleepy_holder 20: the main thread holds the mutex 2 ms, 20 times, while the waiter waits for
// it; each wait ends with the main thread's release.
TEST(ChromeTrace, WaitsHoldsAndHandoffsOfATracedRun) {
  TemporaryDirectory dir;
  const ProcessProfile process =
      record_unchanged(dir, "sleepy_holder", {"20"}, {"--trace", "--hold-sample", "1"});
  ASSERT_TRUE(process.trace.present);
  const FoundSite wait =
      find_site(process, "sleepy_holder", "waiter-lock", format::Operation::kLock);
  ASSERT_NE(wait.lock, nullptr);
  // A global mutex: named by its symbol, in the trace as everywhere.
  EXPECT_EQ(wait.lock->name, "slow_mutex");
  const std::string lock = "mutex " + wait.lock->name;
  auto [waits, holds, starts, finishes, thread_names, process_name, contended] =
      chrome_events(dir, process);
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

// handoffs 500: four threads hammering one mutex, and a condvar ping-pong. On every track the
// slices nest or follow one another (a viewer draws a slice that begins inside another and ends
// after it as neither), and every flow pairs up inside its slices.
TEST(ChromeTrace, SlicesOfATrackNestAndFlowsPairUpUnderContention) {
  TemporaryDirectory dir;
  const ProcessProfile process =
      record_unchanged(dir, "handoffs", {"500"}, {"--trace", "--hold-sample", "1"});
  ChromeEvents events = chrome_events(dir, process);
  EXPECT_EQ(events.waits.size(), events.contended);
  std::map<uint64_t, std::vector<std::pair<int64_t, int64_t>>> tracks;  // ns, from the µs
  for (const std::vector<json>* slices : {&events.waits, &events.holds})
    for (const json& slice : *slices) {
      const double ts = slice["ts"], dur = slice["dur"];
      tracks[slice["tid"]].emplace_back(std::llround(ts * 1000), -std::llround((ts + dur) * 1000));
    }
  size_t partial = 0;
  for (auto& [tid, slices] : tracks) {
    std::sort(slices.begin(), slices.end());  // by begin, the longest first
    std::vector<int64_t> open;                // ends of the enclosing slices
    for (const auto& [begin, minus_end] : slices) {
      while (!open.empty() && open.back() <= begin) open.pop_back();
      if (!open.empty() && -minus_end > open.back()) ++partial;
      open.push_back(-minus_end);
    }
  }
  EXPECT_EQ(partial, 0u);
  EXPECT_EQ(events.starts.size(), events.finishes.size());
  for (const auto& [id, start] : events.starts) {
    ASSERT_TRUE(events.finishes.count(id)) << "no finish for " << start;
    EXPECT_TRUE(enclosed(events.holds, start["tid"], start["ts"])) << start;
    EXPECT_TRUE(enclosed(events.waits, events.finishes[id]["tid"], events.finishes[id]["ts"]));
  }
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
