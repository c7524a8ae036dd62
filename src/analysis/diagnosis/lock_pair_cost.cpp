#include "analysis/diagnosis/lock_pair_cost.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace lockscope {
namespace {

// Why measure here, at report time, rather than take a figure from elsewhere:
//   - the profile does not carry one: the runtime never times an uncontended pair (it would have
//     to do so in every profiled program's start-up, for a figure only two rules use), and the
//     pairs it does see are profiled ones, which cost more than the program's own (bench/overhead:
//     +8 ns a pair);
//   - bench/overhead/RESULTS.md's 5.9 ns and `lockscope bench` are another session's machine, and
//     a constant would be a guess on this one;
//   - the report nearly always runs where the program was recorded, so this machine's price is
//     the program's. The findings say "this machine's", so that a report made elsewhere says so.
// The report process is never preloaded with the runtime: this is the plain glibc pair, one
// thread, the lock's line in this CPU's cache (what an uncontended pair costs at best). The best
// of several rounds: a round that was preempted or migrated only ever measures more.
constexpr int kRounds = 8;
constexpr int kPairsPerRound = 20'000;  // ~10 ns each: 0.2 ms a round, far above the clock's step

template <typename Pair>
double best_round_ns(Pair pair) {
  double best = 0;
  for (int round = 0; round < kRounds; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kPairsPerRound; ++i) pair();
    const auto elapsed = std::chrono::steady_clock::now() - start;
    const double ns =
        double(std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count()) /
        kPairsPerRound;
    best = round == 0 ? ns : std::min(best, ns);
  }
  return best;
}

double measure_mutex_pair_ns() {
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  const double ns = best_round_ns([&] {
    pthread_mutex_lock(&mutex);
    pthread_mutex_unlock(&mutex);
  });
  pthread_mutex_destroy(&mutex);
  return ns;
}

double measure_rwlock_pair_ns() {  // the read side: what a hot rwlock is taken for
  pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
  const double ns = best_round_ns([&] {
    pthread_rwlock_rdlock(&rwlock);
    pthread_rwlock_unlock(&rwlock);
  });
  pthread_rwlock_destroy(&rwlock);
  return ns;
}

double measure_spinlock_pair_ns() {
  pthread_spinlock_t spinlock;
  pthread_spin_init(&spinlock, PTHREAD_PROCESS_PRIVATE);
  const double ns = best_round_ns([&] {
    pthread_spin_lock(&spinlock);
    pthread_spin_unlock(&spinlock);
  });
  pthread_spin_destroy(&spinlock);
  return ns;
}

}  // namespace

double uncontended_pair_ns(format::Primitive primitive) {
  switch (primitive) {
    case format::Primitive::kMutex: {
      static const double measured = measure_mutex_pair_ns();
      return measured;
    }
    case format::Primitive::kRwLock: {
      static const double measured = measure_rwlock_pair_ns();
      return measured;
    }
    case format::Primitive::kSpinLock: {
      static const double measured = measure_spinlock_pair_ns();
      return measured;
    }
    default:
      return 0;
  }
}

}  // namespace lockscope
