// Process-wide identity of every lock seen: address -> slot. Lookups are lock-free; a new address
// is inserted under a small internal lock (once per lock, off the hot path), and the table grows
// without moving anything: slots live in a ChunkedArray (their numbers and addresses are stable,
// so sites and site caches keep them), and the hash index of slot numbers is rebuilt at twice the
// size when half full and published with one pointer swap. A reader still probing the old index
// may miss a newer lock; it then takes the insertion path, which looks again in the current index.
// Old indexes are never unmapped (a reader may still be in one): their total is below the final
// index's size.
//
// A lock is (address, generation): pthread_mutex_init after the address was used, and
// pthread_mutex_destroy, start a new generation; the finished one is copied to the retired list so
// its init site survives. The owner fields are written inside the lock's critical sections
// (lock_owner.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "runtime/chunked_array.h"
#include "runtime/internal_lock.h"

namespace lockscope::runtime {

// One cache line per lock. Condvar and barrier fields share it with the owner fields: those are
// written only for mutexes and rwlocks, so no line is hot for both.
struct alignas(64) LockSlot {
  std::atomic<uintptr_t> address;  // 0 = not yet filled
  std::atomic<uintptr_t> init_site;
  // A mutex whose owner is in its owner word (lock_owner.h): when holder_site was last published.
  std::atomic<uint64_t> holder_published_ticks;
  std::atomic<uint64_t> last_signal_ticks;  // condvar: clock at its latest signal/broadcast
  std::atomic<uint64_t> arrivals;           // barrier arrivals since init
  std::atomic<uint32_t> generation;
  std::atomic<uint32_t> flags;  // format::LockFlags
  // tid: the last owner, when the slot keeps it; for a mutex whose owner word does, the thread
  // whose hold holder_site names (holder_tid).
  std::atomic<uint32_t> last_owner;
  std::atomic<uint32_t> capacity;  // barrier count, semaphore initial value
  // Condvar, semaphore: threads inside a wait on it. Mutex, rwlock, spinlock: threads blocked
  // acquiring it (a release that sees one made a thread wait: see LockSlot::waited_on).
  std::atomic<uint32_t> waiters;
  std::atomic<uint8_t> kind;       // format::MutexKind
  std::atomic<uint8_t> primitive;  // format::Primitive; 0 until first seen
  std::atomic<bool> used;          // acquired since its generation began
  // A thread has blocked acquiring it in this generation: from then on every hold of it reads the
  // clock at acquisition, so that each hold that makes a thread wait is timed exactly.
  std::atomic<bool> waited_on;
};
static_assert(sizeof(LockSlot) == 64);

// A condvar has no owner and no arrivals: its slot keeps, in those fields, the lock its latest
// signaller held innermost (slot + 1, 0 = none) and when that lock was released after the signal.
inline std::atomic<uint32_t>& signaller_held_slot(LockSlot& condvar) {
  return condvar.last_owner;
}
inline std::atomic<uint64_t>& signaller_release_ticks(LockSlot& condvar) {
  return condvar.arrivals;
}
// ... nor a published holder: there go the threads inside a wait on it that no signal or broadcast
// has woken yet (a woken thread stays inside its call until it has the mutex again, and a signal
// sent meanwhile wakes nobody: 1,000 broadcasts in one hold showed "woke 1,000" for 1 wait).
inline std::atomic<uint64_t>& unsignalled_waiters(LockSlot& condvar) {
  return condvar.holder_published_ticks;
}
// A mutex, spinlock or rwlock's write side has no arrivals either: there goes the acquire site of
// its latest hold, written inside the critical section (note_owner, lock_owner.h), so that a thread
// that waited for the lock can name, once it has it, the acquire site of the hold it waited behind.
inline std::atomic<uint64_t>& holder_site(LockSlot& lock) {
  return lock.arrivals;
}
// For a mutex whose owner word keeps its owner, holder_site is published instead by the release
// that leaves a thread waiting (publish_holder), with the holder and the time.
inline std::atomic<uint32_t>& holder_tid(LockSlot& lock) {
  return lock.last_owner;
}
inline std::atomic<uint64_t>& holder_ticks(LockSlot& lock) {
  return lock.holder_published_ticks;
}
// ... nor signals: a release that leaves a thread blocked acquiring the lock writes there the CPU
// it ran on (+ 1) before its real unlock, and the next contended acquisition takes it (0 again),
// so it can tell whether the lock came to it from another CPU (its cache lines moved) or this one.
inline std::atomic<uint64_t>& releaser_cpu(LockSlot& lock) {
  return lock.last_signal_ticks;
}
// Its value: the releasing thread in the high 32 bits, its CPU + 1 in the low ones (0: none).
constexpr uint64_t releaser_cpu_value(uint32_t tid, uint32_t cpu) {
  return uint64_t{tid} << 32 | (uint64_t{cpu} + 1);
}
// ... nor a capacity: the same release writes there the number of its call stack in the
// HolderStackTable (0: not captured), taken by the same acquirer (holder_stacks.h).
inline std::atomic<uint32_t>& holder_stack(LockSlot& lock) {
  return lock.capacity;
}
constexpr uint32_t releaser_tid(uint64_t value) {
  return static_cast<uint32_t>(value >> 32);
}
constexpr uint32_t releaser_cpu_plus_one(uint64_t value) {
  return static_cast<uint32_t>(value);
}
static_assert(releaser_tid(releaser_cpu_value(UINT32_MAX, 0)) == UINT32_MAX &&
                  releaser_cpu_plus_one(releaser_cpu_value(UINT32_MAX, 0)) == 1 &&
                  releaser_cpu_plus_one(releaser_cpu_value(7, UINT32_MAX - 1)) == UINT32_MAX &&
                  releaser_tid(releaser_cpu_value(7, UINT32_MAX - 1)) == 7,
              "the releaser's tid and CPU + 1 each keep their half of the word");

struct RetiredLock {  // a finished generation
  uintptr_t address;
  uint32_t slot;
  uint32_t generation;
  uint32_t kind;
  uint32_t flags;
  uintptr_t init_site;
  uint32_t primitive;
  uint32_t capacity;
};

class LockTable {
 public:
  static constexpr uint32_t kNoSlot = 0xFFFFFFFFu;

  // Slot number of `address`, or kNoSlot when it has none.
  uint32_t find(uintptr_t address) const {
    Index* index = index_.load(std::memory_order_acquire);
    if (!index) return kNoSlot;
    const size_t mask = index->capacity - 1;
    for (size_t i = hash(address) & mask;; i = (i + 1) & mask) {
      const uint32_t number = index->numbers()[i].load(std::memory_order_acquire);
      if (number == 0) return kNoSlot;
      if (slots_[number - 1].address.load(std::memory_order_relaxed) == address) return number - 1;
    }
  }
  // Slot number of `address`, inserted if new; kNoSlot only when the kernel refuses memory.
  uint32_t find_or_insert(uintptr_t address) {
    const uint32_t found = find(address);
    return found != kNoSlot ? found : insert(address);
  }
  LockSlot& slot(uint32_t number) const { return slots_[number]; }
  // Requests the index line find() will read for `address`: issued before the trylock of an
  // uncached acquisition, its miss overlaps the lock word's.
  void prefetch(uintptr_t address) const {
    if (Index* index = index_.load(std::memory_order_acquire))
      __builtin_prefetch(&index->numbers()[hash(address) & (index->capacity - 1)]);
  }
  // Slots 0 .. size()-1 are every lock seen, in insertion order.
  size_t size() const { return slots_.size(); }

  // Ends the current generation of a slot (destroy, or init of a used address).
  void retire_generation(uint32_t number);
  size_t retired_count() const { return retired_.size(); }
  const RetiredLock& retired(size_t i) const { return retired_[i]; }
  uint64_t retired_dropped() const { return retired_dropped_.load(std::memory_order_relaxed); }
  // After fork(), in the child: keep identities and init sites, forget owners, counts and the
  // parent's finished generations.
  void reset_after_fork();

  static size_t hash(uintptr_t address) {
    uint64_t h = (address >> 3) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(h ^ (h >> 31));
  }

 private:
  struct Index {
    size_t capacity;  // a power of two
    std::atomic<uint32_t>* numbers() { return reinterpret_cast<std::atomic<uint32_t>*>(this + 1); }
  };

  uint32_t insert(uintptr_t address);
  bool grow_index();

  ChunkedArray<LockSlot, 10> slots_;
  std::atomic<Index*> index_{nullptr};
  ChunkedArray<RetiredLock, 8> retired_;
  std::atomic<uint64_t> retired_dropped_{0};
  InternalLock lock_;
};

}  // namespace lockscope::runtime
