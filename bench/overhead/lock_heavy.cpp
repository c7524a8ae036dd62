// A lock-heavy whole program for the plain-vs-profiled comparison (compare.sh): two threads, each
// taking one of four mutexes at random for a short critical section, with a little arithmetic in
// between. Roughly one pair every ~60 ns per thread: far heavier than most real programs, so the
// ratio it gives is a ceiling, not a typical figure.
//
// Usage: lockscope_lock_heavy [PAIRS_PER_THREAD]   (default 5,000,000)
// Prints the pair count and a checksum, which must be the same plain and profiled.
#include <pthread.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

constexpr int kThreads = 2;
constexpr int kLocks = 4;
constexpr int kWorkRounds = 24;  // xorshift rounds outside the lock: the "small work in between"

struct alignas(64) GuardedCounter {
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  uint64_t pairs = 0;
  uint64_t sum = 0;
};

GuardedCounter counters[kLocks];
uint64_t pairs_per_thread = 5'000'000;

uint64_t xorshift(uint64_t x) {
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return x;
}

void* worker(void* argument) {
  uint64_t state = 0x9E3779B97F4A7C15ull * (reinterpret_cast<uintptr_t>(argument) + 1);
  for (uint64_t i = 0; i < pairs_per_thread; ++i) {
    for (int k = 0; k < kWorkRounds; ++k) state = xorshift(state);
    GuardedCounter& counter = counters[state % kLocks];
    pthread_mutex_lock(&counter.mutex);
    ++counter.pairs;
    counter.sum += state & 0xFFFF;
    pthread_mutex_unlock(&counter.mutex);
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) pairs_per_thread = std::strtoull(argv[1], nullptr, 10);
  pthread_t threads[kThreads];
  for (int t = 0; t < kThreads; ++t)
    pthread_create(&threads[t], nullptr, worker,
                   reinterpret_cast<void*>(static_cast<uintptr_t>(t)));
  for (pthread_t thread : threads) pthread_join(thread, nullptr);
  uint64_t pairs = 0;
  uint64_t checksum = 0;
  for (const GuardedCounter& counter : counters) {
    pairs += counter.pairs;
    checksum = checksum * 31 + counter.sum;
  }
  std::printf("pairs %llu checksum %016llx\n", static_cast<unsigned long long>(pairs),
              static_cast<unsigned long long>(checksum));
  return pairs == pairs_per_thread * kThreads ? 0 : 1;
}
