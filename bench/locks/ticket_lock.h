// Ticket lock: take a number, wait until it is served.
//
// Strictly FIFO-fair, never parks. All waiters spin on one `serving_` word, so each release
// invalidates every waiter's copy (traffic grows with waiters). Fairness has a price: if the next
// ticket's owner is preempted, everybody waits for it — do not use with more runnable threads than
// cores.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "bench/locks/lock_concept.h"

namespace lockscope::lab {

class TicketLock {
 public:
  static constexpr std::string_view kName = "ticket";

  TicketLock() = default;
  TicketLock(const TicketLock&) = delete;
  TicketLock& operator=(const TicketLock&) = delete;

  void lock() {
    const std::uint32_t ticket = next_.fetch_add(1, std::memory_order_relaxed);
    SpinWait spin;
    while (serving_.load(std::memory_order_acquire) != ticket) spin.once();
  }
  // Succeeds only when nobody holds or waits: next == serving, and we take that ticket atomically.
  bool try_lock() {
    std::uint32_t serving = serving_.load(std::memory_order_acquire);
    return next_.compare_exchange_strong(serving, serving + 1, std::memory_order_acquire,
                                         std::memory_order_relaxed);
  }
  // Only the holder writes serving_, so a plain load + store (no RMW) is enough.
  void unlock() {
    serving_.store(serving_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

 private:
  // Both words on one line: a handoff then moves one line, not two (the lab measures exactly that).
  alignas(kCacheLine) std::atomic<std::uint32_t> next_{0};
  std::atomic<std::uint32_t> serving_{0};
};

static_assert(Lockable<TicketLock>);

}  // namespace lockscope::lab
