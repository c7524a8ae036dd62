// Spin-then-park hybrid: spin briefly (the holder is probably about to release), then sleep on a
// futex exactly like FutexMutex.
//
// Not fair. Wins when critical sections are shorter than a sleep/wake round trip (~several µs) and
// cores are idle; wastes up to kSpinLimit pauses per acquisition when they are not. Do not use it
// when threads outnumber cores — spinning then only delays the holder.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "bench/locks/futex_mutex.h"
#include "bench/locks/lock_concept.h"

namespace lockscope::lab {

class SpinThenParkMutex {
 public:
  static constexpr std::string_view kName = "spin-park";
  static constexpr int kSpinLimit = 200;

  SpinThenParkMutex() = default;
  SpinThenParkMutex(const SpinThenParkMutex&) = delete;
  SpinThenParkMutex& operator=(const SpinThenParkMutex&) = delete;

  void lock() {
    std::uint32_t state = kFree;
    for (int spin = 0; spin < kSpinLimit; ++spin) {
      state = kFree;
      if (state_.compare_exchange_weak(state, kLocked, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
        return;
      }
      // Someone is already asleep: spinning cannot get us ahead of the wake-up, so park now.
      if (state == kLockedWithWaiters) break;
      while (state_.load(std::memory_order_relaxed) == kLocked && ++spin < kSpinLimit) cpu_relax();
    }
    FutexMutex::lock_slow(state_.load(std::memory_order_relaxed), state_);
  }
  bool try_lock() {
    std::uint32_t state = kFree;
    return state_.compare_exchange_strong(state, kLocked, std::memory_order_acquire,
                                          std::memory_order_relaxed);
  }
  void unlock() { FutexMutex::unlock_word(state_); }

 private:
  alignas(kCacheLine) std::atomic<std::uint32_t> state_{kFree};
};

static_assert(Lockable<SpinThenParkMutex>);

}  // namespace lockscope::lab
