// Test-and-test-and-set spinlock with bounded exponential backoff.
//
// Unfair, never parks. Waiters spin on a shared (read-only) copy of the line and only try the
// exchange when it looks free, backing off longer after each lost race — far less coherence traffic
// than TAS. Not for critical sections that may sleep or for machines with more runnable threads
// than cores.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string_view>

#include "bench/locks/lock_concept.h"

namespace lockscope::lab {

class TtasBackoffSpinlock {
 public:
  static constexpr std::string_view kName = "ttas-backoff";
  static constexpr std::uint32_t kMinBackoff = 4;
  static constexpr std::uint32_t kMaxBackoff = 1024;

  TtasBackoffSpinlock() = default;
  TtasBackoffSpinlock(const TtasBackoffSpinlock&) = delete;
  TtasBackoffSpinlock& operator=(const TtasBackoffSpinlock&) = delete;

  void lock() {
    std::uint32_t backoff = kMinBackoff;
    SpinWait spin;
    while (true) {
      if (!locked_.load(std::memory_order_relaxed) &&
          !locked_.exchange(true, std::memory_order_acquire)) {
        return;
      }
      for (std::uint32_t i = 0; i < backoff; ++i) cpu_relax();
      backoff = std::min(backoff * 2, kMaxBackoff);
      while (locked_.load(std::memory_order_relaxed)) spin.once();
    }
  }
  bool try_lock() {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  alignas(kCacheLine) std::atomic<bool> locked_{false};
};

static_assert(Lockable<TtasBackoffSpinlock>);

}  // namespace lockscope::lab
