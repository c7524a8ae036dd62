// Process-wide identity of every lock seen: address -> slot, lock-free (insertion by CAS on the
// address), fixed size, mmap'd with MAP_NORESERVE.
//
// A lock is (address, generation): pthread_mutex_init after the address was used, and
// pthread_mutex_destroy, start a new generation; the finished one is copied to the retired list so
// its init site and owner changes survive. `last_owner` and `owner_changes` are updated at release
// (see note_release_owner in recorder.h), with atomic exchange and add.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace lockscope::runtime {

struct alignas(64) LockSlot {
  std::atomic<uintptr_t> address;  // 0 = free
  std::atomic<uint32_t> generation;
  std::atomic<uint32_t> kind;   // format::MutexKind
  std::atomic<uint32_t> flags;  // format::LockFlags
  std::atomic<uint32_t> last_owner;  // tid
  std::atomic<bool> used;  // acquired since its generation began (zero-init: not yet)
  std::atomic<uintptr_t> init_site;
  std::atomic<uint64_t> owner_changes;
  std::atomic<uint32_t> primitive;  // format::Primitive; 0 until first seen
  std::atomic<uint32_t> capacity;   // barrier count, semaphore initial value
  // Condvars and barriers only, on their own line: written by every waiter and signaller.
  alignas(64) std::atomic<uint32_t> waiters;  // threads inside a condition wait on it
  std::atomic<uint64_t> last_signal_ticks;    // clock at its latest signal/broadcast
  std::atomic<uint64_t> arrivals;             // barrier arrivals since init
};

struct RetiredLock {  // a finished generation
  uintptr_t address;
  uint32_t slot;
  uint32_t generation;
  uint32_t kind;
  uint32_t flags;
  uintptr_t init_site;
  uint64_t owner_changes;
  uint32_t primitive;
  uint32_t capacity;
};

class LockTable {
 public:
  static constexpr uint32_t kNoSlot = 0xFFFFFFFFu;
  bool create(size_t capacity, size_t retired_capacity);

  // Slot index of `address`, inserted if new; kNoSlot when the table is full.
  uint32_t find_or_insert(uintptr_t address) {
    size_t index = hash(address) & (capacity_ - 1);
    for (size_t probe = 0; probe < kMaxProbe; ++probe) {
      LockSlot& slot = slots_[index];
      uintptr_t current = slot.address.load(std::memory_order_acquire);
      if (current == address) return static_cast<uint32_t>(index);
      if (current == 0) {
        if (slot.address.compare_exchange_strong(current, address, std::memory_order_acq_rel)) {
          used_list_[used_count_.fetch_add(1, std::memory_order_acq_rel)] =
              static_cast<uint32_t>(index);
          return static_cast<uint32_t>(index);
        }
        if (current == address) return static_cast<uint32_t>(index);
      }
      index = (index + 1) & (capacity_ - 1);
    }
    return kNoSlot;
  }
  LockSlot& slot(uint32_t index) { return slots_[index]; }
  // Slots in use, in insertion order (index i < used_count()); avoids scanning the whole table.
  size_t used_count() const { return used_count_.load(std::memory_order_acquire); }
  uint32_t used_slot(size_t i) const { return used_list_[i]; }
  size_t capacity() const { return capacity_; }

  // Ends the current generation of a slot (destroy, or init of a used address).
  void retire_generation(uint32_t index);
  size_t retired_count() const {
    size_t n = retired_used_.load(std::memory_order_acquire);
    return n < retired_capacity_ ? n : retired_capacity_;
  }
  const RetiredLock& retired(size_t i) const { return retired_[i]; }
  uint64_t retired_dropped() const;
  // After fork(): keep identities and init sites, forget owners and counts.
  void reset_counts_after_fork();

  static size_t hash(uintptr_t address) {
    uint64_t h = (address >> 3) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(h ^ (h >> 31));
  }

 private:
  static constexpr size_t kMaxProbe = 128;
  LockSlot* slots_ = nullptr;
  size_t capacity_ = 0;
  RetiredLock* retired_ = nullptr;
  size_t retired_capacity_ = 0;
  std::atomic<size_t> retired_used_{0};
  uint32_t* used_list_ = nullptr;
  std::atomic<size_t> used_count_{0};
};

}  // namespace lockscope::runtime
