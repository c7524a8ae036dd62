// What an exact owner-change count costs a contended program, without lockscope: the lock-heavy
// fixture's pattern (two threads, four mutexes at random, a short critical section), where each
// acquisition notes its owner inside the critical section, as exact HANDOFFS must:
//   none:       no owner noted (plain);
//   mutex-line: a token in the mutex's own __count when it changed (lockscope's way for a plain
//               mutex, lock_owner.h): the line the trylock just took;
//   own-line:   the same in a separate cache line per lock (lockscope's way before, and still its
//               way for recursive, robust, PI/PP and process-shared mutexes).
// Rounds alternate the three, so that the machine's noise hits all alike; prints medians of the
// wall time and of the failed trylocks (contention: a longer critical section makes more). Exits 1
// when an acquisition was lost (the pairs counted under the locks are not all the pairs made): the
// mutex-line mode writes into glibc's own mutex word, which must not break the lock.
// Usage: lockscope_owner_write_cost [ROUNDS] [PAIRS_PER_THREAD]   (defaults 7, 5,000,000)
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

enum class Mode { kNone, kMutexLine, kOwnLine };
constexpr const char* kModeNames[] = {"none", "mutex-line", "own-line"};
constexpr int kLocks = 4;

struct alignas(64) GuardedCounter {
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  uint64_t pairs = 0;
  uint64_t sum = 0;
};
struct alignas(64) OwnerLine {
  uint32_t owner = 0;
};

GuardedCounter counters[kLocks];
OwnerLine owner_lines[kLocks];
Mode mode = Mode::kNone;
uint64_t pairs_per_thread = 5'000'000;

struct Worker {
  int index;
  uint64_t contended = 0;
};

uint64_t xorshift(uint64_t x) {
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return x;
}

void* work(void* argument) {
  auto& worker = *static_cast<Worker*>(argument);
  const auto token = static_cast<uint32_t>(syscall(SYS_gettid));
  uint64_t state = 0x9E3779B97F4A7C15ull * (static_cast<uint64_t>(worker.index) + 1);
  for (uint64_t i = 0; i < pairs_per_thread; ++i) {
    for (int k = 0; k < 24; ++k) state = xorshift(state);
    const int n = static_cast<int>(state % kLocks);
    GuardedCounter& counter = counters[n];
    if (pthread_mutex_trylock(&counter.mutex) != 0) {
      ++worker.contended;
      pthread_mutex_lock(&counter.mutex);
    }
    uint32_t* owner = mode == Mode::kMutexLine ? &counter.mutex.__data.__count
                      : mode == Mode::kOwnLine ? &owner_lines[n].owner
                                               : nullptr;
    if (owner && __atomic_load_n(owner, __ATOMIC_RELAXED) != token)
      __atomic_store_n(owner, token, __ATOMIC_RELAXED);
    ++counter.pairs;
    counter.sum += state & 0xFFFF;
    pthread_mutex_unlock(&counter.mutex);
  }
  return nullptr;
}

// One run: its wall seconds and failed trylocks.
std::pair<double, uint64_t> run() {
  Worker workers[2] = {{0}, {1}};
  pthread_t threads[2];
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < 2; ++t) pthread_create(&threads[t], nullptr, work, &workers[t]);
  for (pthread_t thread : threads) pthread_join(thread, nullptr);
  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - start;
  return {wall.count(), workers[0].contended + workers[1].contended};
}

template <typename T>
T median(std::vector<T> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  if (argc > 2) pairs_per_thread = std::strtoull(argv[2], nullptr, 10);
  std::vector<double> seconds[3];
  std::vector<uint64_t> contended[3];
  for (int r = 0; r < rounds; ++r)
    for (int m = 0; m < 3; ++m) {
      mode = static_cast<Mode>(m);
      const auto [wall, failed] = run();
      seconds[m].push_back(wall);
      contended[m].push_back(failed);
    }
  std::printf("owner noted in   wall (median of %d)   vs none   failed trylocks\n", rounds);
  const double none = median(seconds[0]);
  for (int m = 0; m < 3; ++m)
    std::printf("%-14s   %10.6f s           %5.2fx   %10llu\n", kModeNames[m], median(seconds[m]),
                median(seconds[m]) / none, static_cast<unsigned long long>(median(contended[m])));
  uint64_t pairs = 0;
  for (const GuardedCounter& counter : counters) pairs += counter.pairs;
  const uint64_t expected = static_cast<uint64_t>(rounds) * 3 * 2 * pairs_per_thread;
  if (pairs != expected) {
    std::printf("lost acquisitions: %llu pairs counted, %llu made\n",
                static_cast<unsigned long long>(pairs), static_cast<unsigned long long>(expected));
    return 1;
  }
  return 0;
}
