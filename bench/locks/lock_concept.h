// The one contract every lock in the lab satisfies, and the spin-wait policy they share.
//
// A lab lock is default-constructible, neither copyable nor movable (threads hold its address), and
// has the BasicLockable + try_lock verbs of the standard library, so std::lock_guard and
// std::unique_lock work on it. `kName` is the name used on the command line (`--locks ticket,mcs`)
// and in reports. Queue locks (MCS, CLH) have a second, lower-level contract that takes the
// waiter's node explicitly; WithThreadLocalNode (queue_lock_adapter.h) turns one into a Lockable.
#pragma once

#include <sched.h>

#include <concepts>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace lockscope::lab {

template <class L>
concept Lockable = std::default_initializable<L> && !std::is_copy_constructible_v<L> &&
                   !std::is_move_constructible_v<L> && requires(L lock) {
  lock.lock();
  lock.unlock();
  { lock.try_lock() } -> std::same_as<bool>;
  { L::kName } -> std::convertible_to<std::string_view>;
};

// A queue lock: every waiter brings a node. The node is passed by reference to pointer because CLH
// hands nodes from thread to thread (a releaser leaves with its predecessor's node).
template <class Q>
concept QueueLock = std::default_initializable<Q> && requires(Q lock, typename Q::Node*& node) {
  lock.lock(node);
  lock.unlock(node);
  { lock.try_lock(node) } -> std::same_as<bool>;
  { Q::kName } -> std::convertible_to<std::string_view>;
};

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Busy-wait step shared by every spinning lock. After kSpinsBeforeYield pauses the waiter yields
// the CPU once: with more threads than cores a spinning waiter may be burning the time slice the
// lock holder needs, and a pure spinner then degrades from "slow" to "stalls for a scheduler tick
// per handoff". The lab still shows that cost (context switches are reported); it just keeps test
// runs bounded.
class SpinWait {
 public:
  static constexpr std::uint32_t kSpinsBeforeYield = 1024;

  void once() {
    if (++spins_ < kSpinsBeforeYield) {
      cpu_relax();
    } else {
      spins_ = 0;
      sched_yield();
    }
  }

 private:
  std::uint32_t spins_ = 0;
};

// Constant cache-line size; std::hardware_destructive_interference_size warns on g++ 12 (ABI note).
inline constexpr std::size_t kCacheLine = 64;

}  // namespace lockscope::lab
