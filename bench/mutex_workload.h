// One run of the mutex scenario for one lock type: T threads loop {lock; ++counter; cs-work;
// unlock; outside-work} for a duration or a fixed number of iterations.
//
// Inside the critical section each thread also notes whether it took the lock from a different
// thread (a handoff) — plain, unsynchronised fields that only the lock protects, so a broken lock
// shows up as a counter that disagrees with the per-thread tallies. verify_mutual_exclusion() turns
// that into an error: every benchmark run checks its lock.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/locks/lock_concept.h"
#include "bench/scheduling.h"

namespace lockscope::lab {

struct MutexWorkload {
  int threads = 1;
  double duration_s = 0.1;       // used when iterations == 0
  std::uint64_t iterations = 0;  // per thread
  std::uint32_t cs_work = 0;
  std::uint32_t outside_work = 0;
};

struct MutexRun {
  double elapsed_s = 0;
  std::uint64_t counter = 0;   // the protected counter after the run
  std::uint64_t handoffs = 0;  // acquisitions by a different thread than the previous one
  std::vector<std::uint64_t> per_thread;  // acquisitions each thread counted for itself
  ResourceUsage usage;
};

inline std::uint64_t total_acquisitions(const MutexRun& run) {
  return std::accumulate(run.per_thread.begin(), run.per_thread.end(), std::uint64_t{0});
}

inline void verify_mutual_exclusion(const MutexRun& run, std::string_view lock_name) {
  if (run.counter != total_acquisitions(run)) {
    throw std::runtime_error("lock '" + std::string(lock_name) + "' let two threads in: counter " +
                             std::to_string(run.counter) +
                             " != " + std::to_string(total_acquisitions(run)) + " acquisitions");
  }
}

template <Lockable L>
MutexRun run_mutex_workload(const MutexWorkload& workload) {
  L lock;
  struct alignas(kCacheLine) Protected {
    std::uint64_t counter = 0;
    std::uint64_t handoffs = 0;
    int last_owner = -1;
  } shared;
  struct alignas(kCacheLine) Tally {
    std::uint64_t acquisitions = 0;
  };
  std::vector<Tally> tallies(static_cast<std::size_t>(workload.threads));
  alignas(kCacheLine) std::atomic<bool> stop{false};
  alignas(kCacheLine) std::atomic<int> ready{0};
  std::atomic<bool> go{false};

  auto worker = [&](int id) {
    ready.fetch_add(1);
    while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
    std::uint64_t mine = 0;
    std::uint64_t seed = static_cast<std::uint64_t>(id) + 1;
    const bool timed = workload.iterations == 0;
    while (timed ? !stop.load(std::memory_order_relaxed) : mine < workload.iterations) {
      lock.lock();
      ++shared.counter;
      if (shared.last_owner != id) {
        if (shared.last_owner >= 0) ++shared.handoffs;
        shared.last_owner = id;
      }
      seed = busy_work(workload.cs_work, seed);
      lock.unlock();
      ++mine;
      seed = busy_work(workload.outside_work, seed);
    }
    tallies[static_cast<std::size_t>(id)].acquisitions = mine;
  };

  std::vector<std::thread> threads;
  threads.reserve(tallies.size());
  for (int id = 0; id < workload.threads; ++id) threads.emplace_back(worker, id);
  while (ready.load() != workload.threads) std::this_thread::yield();
  const ResourceUsage usage_before = resource_usage_self();
  const std::int64_t start = monotonic_ns();
  go.store(true, std::memory_order_release);
  if (workload.iterations == 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(workload.duration_s));
    stop.store(true, std::memory_order_relaxed);
  }
  for (std::thread& thread : threads) thread.join();
  MutexRun run;
  run.elapsed_s = static_cast<double>(monotonic_ns() - start) / 1e9;
  run.usage = resource_usage_self() - usage_before;
  run.counter = shared.counter;
  run.handoffs = shared.handoffs;
  for (const Tally& tally : tallies) run.per_thread.push_back(tally.acquisitions);
  return run;
}

}  // namespace lockscope::lab
