// What liblockscope.so adds to an uncontended lock+unlock pair. Run this binary twice, plain and
// under the runtime (`lockscope record -- lockscope_overhead_bench`, or LD_PRELOAD with
// LOCKSCOPE_CONFIG); the added cost is the difference of the medians (compare.sh does both).
//
// Every call below goes through the PLT to the interposed symbol: nothing is inlined, so the plain
// run measures glibc and the profiled run measures glibc plus lockscope. The clock rows (rdtsc,
// clock_gettime) are here for scale: a hot path that reads the clock twice per pair cannot be
// cheaper than two of them.
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <time.h>
#include <x86intrin.h>

#include <array>
#include <mutex>

namespace {

void pthread_mutex_pair(benchmark::State& state) {
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  for (auto _ : state) {
    pthread_mutex_lock(&mutex);
    pthread_mutex_unlock(&mutex);
  }
  pthread_mutex_destroy(&mutex);
}
BENCHMARK(pthread_mutex_pair);

void pthread_mutex_trylock_pair(benchmark::State& state) {
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  for (auto _ : state) {
    benchmark::DoNotOptimize(pthread_mutex_trylock(&mutex));
    pthread_mutex_unlock(&mutex);
  }
  pthread_mutex_destroy(&mutex);
}
BENCHMARK(pthread_mutex_trylock_pair);

void std_mutex_pair(benchmark::State& state) {
  std::mutex mutex;
  for (auto _ : state) {
    mutex.lock();
    mutex.unlock();
  }
}
BENCHMARK(std_mutex_pair);

// 64 distinct mutexes in turn: 64 lock slots and site entries instead of one hot entry, closer to a
// real program's working set (each runtime SiteStats entry is a few KB).
void pthread_mutex_pair_64_locks(benchmark::State& state) {
  struct alignas(64) PaddedMutex {
    pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  };
  static std::array<PaddedMutex, 64> mutexes;
  size_t next = 0;
  for (auto _ : state) {
    pthread_mutex_t* mutex = &mutexes[next].mutex;
    next = (next + 1) & 63;
    pthread_mutex_lock(mutex);
    pthread_mutex_unlock(mutex);
  }
}
BENCHMARK(pthread_mutex_pair_64_locks);

void rdtsc(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(__rdtsc());
}
BENCHMARK(rdtsc);

void clock_gettime_monotonic(benchmark::State& state) {
  timespec now;
  for (auto _ : state) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    benchmark::DoNotOptimize(now);
  }
}
BENCHMARK(clock_gettime_monotonic);

}  // namespace

BENCHMARK_MAIN();
