// The lock of the runtime's own rare paths (thread slots, the process table, new lock identities):
// never one of the program's mutexes, which we interpose. A futex lock (Drepper's three states:
// 0 free, 1 locked, 2 locked with sleepers), not a spinlock: with more threads than cores a
// preempted holder made spinners yield by the thousand when thousands of short-lived threads came
// and went. Only ever taken by code marked inside lockscope, so a signal handler of the holding
// thread never waits for it (inside_lockscope.h).
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "common/tsc_calibration.h"

namespace lockscope::runtime {

// A byte per thread whose address names the thread (InternalLock's holder): no system call.
inline __thread char internal_lock_thread_tag;
// The lock this thread is changing the state of (in lock() or unlock()), nullptr when none: the
// lock word and the holder are two stores, and a signal handler that lands between them must
// still know whether its own thread holds the lock (held_by_this_thread).
inline __thread const void* internal_lock_changing;

class InternalLock {
 public:
  void lock() { lock_within(kForever); }
  // lock(), waiting for another holder at most `ns`: false if it did not let go by then (a thread
  // leaving while a snapshot's writer that stalled holds the lock).
  bool lock_within(uint64_t ns) {
    Changing changing(this);
    uint32_t expected = 0;
    if (!state_.compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
      const uint64_t start = ns == kForever ? 0 : monotonic_now_ns();
      if (expected != 2) expected = state_.exchange(2, std::memory_order_acquire);
      while (expected != 0) {
        timespec timeout{};
        if (ns != kForever) {
          const uint64_t waited = monotonic_now_ns() - start;
          if (waited >= ns) return false;  // the lock stays marked as waited for: harmless
          timeout.tv_sec = static_cast<time_t>((ns - waited) / 1'000'000'000);
          timeout.tv_nsec = static_cast<long>((ns - waited) % 1'000'000'000);
        }
        syscall(SYS_futex, reinterpret_cast<uint32_t*>(&state_), FUTEX_WAIT_PRIVATE, 2,
                ns == kForever ? nullptr : &timeout, nullptr, 0);
        expected = state_.exchange(2, std::memory_order_acquire);
      }
    }
    holder_.store(this_thread(), std::memory_order_relaxed);
    return true;
  }
  static constexpr uint64_t kForever = ~uint64_t{0};
  // Never waits: false when another thread holds it.
  bool try_lock() {
    Changing changing(this);
    uint32_t expected = 0;
    if (!state_.compare_exchange_strong(expected, 1, std::memory_order_acquire)) return false;
    holder_.store(this_thread(), std::memory_order_relaxed);
    return true;
  }
  // For a signal handler that must not wait for ever (its own thread may be the holder): tries
  // for about `milliseconds`, sleeping between tries; false if the lock never came free.
  bool try_lock_for(int milliseconds) {
    for (int waited = 0;; ++waited) {
      if (try_lock()) return true;
      if (waited >= milliseconds) return false;
      const struct timespec pause = {0, 1000000};
      syscall(SYS_nanosleep, &pause, nullptr);
    }
  }
  void unlock() {
    uint32_t was;
    {
      Changing changing(this);  // only until it is free: not while it wakes a waiter
      holder_.store(0, std::memory_order_relaxed);
      was = state_.exchange(0, std::memory_order_release);
    }
    if (was == 2)
      syscall(SYS_futex, reinterpret_cast<uint32_t*>(&state_), FUTEX_WAKE_PRIVATE, 1, nullptr,
              nullptr, 0);
  }
  // Whether the calling thread holds it: a signal handler that interrupted the holder, on the
  // holder's own thread, would wait for itself for ever (_exit called from a handler while a
  // snapshot of the profile was being written).
  // Also between the lock word's change and the holder's (lock, unlock): the lock taken, no holder
  // noted yet, or the holder cleared, the lock not yet free. (This thread may also be waiting for
  // another's hold there: that one is then the holder, unless it is between its own two stores,
  // when the answer is a wrong "yes", which only makes the caller give up.)
  bool held_by_this_thread() const {
    const uintptr_t holder = holder_.load(std::memory_order_relaxed);
    return holder == this_thread() || (internal_lock_changing == this && holder == 0 &&
                                       state_.load(std::memory_order_relaxed) != 0);
  }
  // After fork(), in the child: the holder, if any, does not exist there.
  void reset() {
    holder_.store(0, std::memory_order_relaxed);
    state_.store(0, std::memory_order_relaxed);
  }

 private:
  static uintptr_t this_thread() { return reinterpret_cast<uintptr_t>(&internal_lock_thread_tag); }
  // Marks the thread as changing `lock`'s state for the scope (a signal handler's nested lock
  // call restores the mark it found).
  class Changing {
   public:
    explicit Changing(const InternalLock* lock) : previous_(internal_lock_changing) {
      internal_lock_changing = lock;
      std::atomic_signal_fence(std::memory_order_seq_cst);
    }
    ~Changing() {
      std::atomic_signal_fence(std::memory_order_seq_cst);
      internal_lock_changing = previous_;
    }
    Changing(const Changing&) = delete;
    Changing& operator=(const Changing&) = delete;

   private:
    const void* previous_;
  };

  std::atomic<uint32_t> state_{0};
  std::atomic<uintptr_t> holder_{0};  // this_thread() of the holder, 0 when free
};
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));

}  // namespace lockscope::runtime
