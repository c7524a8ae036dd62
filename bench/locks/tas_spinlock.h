// Test-and-set spinlock: every waiter hammers the lock word with atomic exchanges.
//
// Unfair (whoever's exchange lands first wins), never parks. Each failed exchange still takes the
// cache line exclusive, so waiters slow down the holder's release; it is the lab's worst case on
// purpose. Do not use it anywhere real — TtasBackoffSpinlock is the minimum acceptable spinlock.
#pragma once

#include <atomic>
#include <string_view>

#include "bench/locks/lock_concept.h"

namespace lockscope::lab {

class TasSpinlock {
 public:
  static constexpr std::string_view kName = "tas";

  TasSpinlock() = default;
  TasSpinlock(const TasSpinlock&) = delete;
  TasSpinlock& operator=(const TasSpinlock&) = delete;

  void lock() {
    SpinWait spin;
    while (locked_.exchange(true, std::memory_order_acquire)) spin.once();
  }
  bool try_lock() { return !locked_.exchange(true, std::memory_order_acquire); }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  alignas(kCacheLine) std::atomic<bool> locked_{false};
};

static_assert(Lockable<TasSpinlock>);

}  // namespace lockscope::lab
