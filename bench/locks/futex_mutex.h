// The three-state futex mutex (Drepper, "Futexes Are Tricky", mutex 3): 0 free, 1 locked, 2 locked
// with possible waiters.
//
// Not fair (a running thread can barge past a woken one), parks in the kernel immediately after one
// failed CAS, and unlock only makes a syscall when state 2 says someone may sleep. This is what
// glibc's normal mutex does; write your own only to learn, as here.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <string_view>

#include "bench/locks/lock_concept.h"

namespace lockscope::lab {

// The kernel sees the atomic's storage as a plain 32-bit word.
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));

inline void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
}
inline void futex_wake(std::atomic<std::uint32_t>& word, int count) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, count, nullptr,
          nullptr, 0);
}

enum FutexMutexState : std::uint32_t { kFree = 0, kLocked = 1, kLockedWithWaiters = 2 };

class FutexMutex {
 public:
  static constexpr std::string_view kName = "futex";

  FutexMutex() = default;
  FutexMutex(const FutexMutex&) = delete;
  FutexMutex& operator=(const FutexMutex&) = delete;

  void lock() {
    std::uint32_t state = kFree;
    if (state_.compare_exchange_strong(state, kLocked, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
      return;
    }
    lock_slow(state, state_);
  }
  bool try_lock() {
    std::uint32_t state = kFree;
    return state_.compare_exchange_strong(state, kLocked, std::memory_order_acquire,
                                          std::memory_order_relaxed);
  }
  void unlock() { unlock_word(state_); }

  // Shared with SpinThenParkMutex: park until the word can be taken as kLockedWithWaiters. Once we
  // have slept we must leave 2 behind, since we cannot know whether others still sleep.
  static void lock_slow(std::uint32_t seen, std::atomic<std::uint32_t>& word) {
    if (seen != kLockedWithWaiters)
      seen = word.exchange(kLockedWithWaiters, std::memory_order_acquire);
    while (seen != kFree) {
      futex_wait(word, kLockedWithWaiters);
      seen = word.exchange(kLockedWithWaiters, std::memory_order_acquire);
    }
  }
  static void unlock_word(std::atomic<std::uint32_t>& word) {
    if (word.exchange(kFree, std::memory_order_release) == kLockedWithWaiters) futex_wake(word, 1);
  }

 private:
  alignas(kCacheLine) std::atomic<std::uint32_t> state_{kFree};
};

static_assert(Lockable<FutexMutex>);

}  // namespace lockscope::lab
