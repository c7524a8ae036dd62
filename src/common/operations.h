// The operations a profile counts (SiteRecord::operation, TraceEvent::operation) and what each one
// is: the primitive it acts on and its class (acquire, release, wait, event). Part of the on-disk
// format (profile_format.h includes it): values are never reordered or reused, new ones go at the
// end and move kLast.
//
// Both classifications are switches that name every operation, no default: an operation added
// without its primitive and class fails to compile (-Werror=switch, cmake/warnings.cmake), and one
// added without moving kLast fails the static_asserts below, as does an rwlock range (is_read_side,
// is_write_side) that no longer matches the classification.
#pragma once

#include <cstdint>

namespace lockscope::format {

enum class Primitive : uint32_t {
  kMutex = 1,
  kRwLock = 2,
  kCondVar = 3,
  kSpinLock = 4,
  kSemaphore = 5,
  kBarrier = 6,
  kLast = kBarrier,
};
inline constexpr uint32_t kPrimitiveSlots = 8;  // arrays indexed by Primitive
static_assert(static_cast<uint32_t>(Primitive::kLast) < kPrimitiveSlots);

enum class Operation : uint16_t {
  kLock = 1,  // mutex (and the spinlock's unlock is kUnlock too)
  kTryLock = 2,
  kTimedLock = 3,
  kClockLock = 4,
  kUnlock = 5,
  kReadLock = 6,  // rwlock, read side
  kTryReadLock = 7,
  kTimedReadLock = 8,
  kClockReadLock = 9,
  kWriteLock = 10,  // rwlock, write side
  kTryWriteLock = 11,
  kTimedWriteLock = 12,
  kClockWriteLock = 13,
  kReadUnlock = 14,
  kWriteUnlock = 15,
  kCondWait = 16,  // condvar: the wait for the condition (wait = until woken)
  kCondTimedWait = 17,
  kCondClockWait = 18,
  kCondSignal = 19,
  kCondBroadcast = 20,
  kCondReacquire = 21,  // on the mutex: glibc's internal re-lock after a condition wait
  kSpinLock = 22,
  kSpinTryLock = 23,
  kSemWait = 24,
  kSemTryWait = 25,
  kSemTimedWait = 26,
  kSemClockWait = 27,
  kSemPost = 28,
  kBarrierWait = 29,
  kCondWake = 30,  // condvar: wake-up latency, from the waking signal to the wait's return (less
                   // the time the signaller still held the mutex: that is the mutex's re-acquire)
  kLast = kCondWake,
};

enum class OperationClass { kAcquire, kRelease, kWait, kEvent };

// What an operation is: an acquisition of a lock (held until released), a release, a wait that
// holds nothing afterwards (condition, semaphore, barrier, re-acquire), or a plain event (signal,
// post).
constexpr OperationClass operation_class(Operation op) {
  switch (op) {
    case Operation::kLock:
    case Operation::kTryLock:
    case Operation::kTimedLock:
    case Operation::kClockLock:
    case Operation::kReadLock:
    case Operation::kTryReadLock:
    case Operation::kTimedReadLock:
    case Operation::kClockReadLock:
    case Operation::kWriteLock:
    case Operation::kTryWriteLock:
    case Operation::kTimedWriteLock:
    case Operation::kClockWriteLock:
    case Operation::kSpinLock:
    case Operation::kSpinTryLock:
      return OperationClass::kAcquire;
    case Operation::kUnlock:
    case Operation::kReadUnlock:
    case Operation::kWriteUnlock:
      return OperationClass::kRelease;
    case Operation::kCondWait:
    case Operation::kCondTimedWait:
    case Operation::kCondClockWait:
    case Operation::kCondReacquire:
    case Operation::kCondWake:
    case Operation::kSemWait:
    case Operation::kSemTryWait:
    case Operation::kSemTimedWait:
    case Operation::kSemClockWait:
    case Operation::kBarrierWait:
      return OperationClass::kWait;
    case Operation::kCondSignal:
    case Operation::kCondBroadcast:
    case Operation::kSemPost:
      return OperationClass::kEvent;
  }
  return OperationClass::kAcquire;  // not an operation (readers refuse those)
}

// The primitive an operation acts on; Primitive{0} for a value that is not an operation.
constexpr Primitive operation_primitive(Operation op) {
  switch (op) {
    case Operation::kLock:
    case Operation::kTryLock:
    case Operation::kTimedLock:
    case Operation::kClockLock:
    case Operation::kUnlock:
    case Operation::kCondReacquire:
      return Primitive::kMutex;
    case Operation::kReadLock:
    case Operation::kTryReadLock:
    case Operation::kTimedReadLock:
    case Operation::kClockReadLock:
    case Operation::kWriteLock:
    case Operation::kTryWriteLock:
    case Operation::kTimedWriteLock:
    case Operation::kClockWriteLock:
    case Operation::kReadUnlock:
    case Operation::kWriteUnlock:
      return Primitive::kRwLock;
    case Operation::kCondWait:
    case Operation::kCondTimedWait:
    case Operation::kCondClockWait:
    case Operation::kCondSignal:
    case Operation::kCondBroadcast:
    case Operation::kCondWake:
      return Primitive::kCondVar;
    case Operation::kSpinLock:
    case Operation::kSpinTryLock:
      return Primitive::kSpinLock;
    case Operation::kSemWait:
    case Operation::kSemTryWait:
    case Operation::kSemTimedWait:
    case Operation::kSemClockWait:
    case Operation::kSemPost:
      return Primitive::kSemaphore;
    case Operation::kBarrierWait:
      return Primitive::kBarrier;
  }
  return Primitive{0};
}

constexpr bool is_acquire(Operation op) {
  return operation_class(op) == OperationClass::kAcquire;
}
// Ranges, for the hot path's compile-time checks; tied to the switches above below.
constexpr bool is_read_side(Operation op) {
  return op >= Operation::kReadLock && op <= Operation::kClockReadLock;
}
constexpr bool is_write_side(Operation op) {
  return op >= Operation::kWriteLock && op <= Operation::kClockWriteLock;
}

namespace operations_checked {
constexpr uint16_t kLastValue = static_cast<uint16_t>(Operation::kLast);
// 1..kLast are all operations and kLast + 1 is none: kLast was moved with the last one added.
constexpr bool every_value_is_an_operation() {
  for (uint16_t value = 1; value <= kLastValue; ++value)
    if (operation_primitive(static_cast<Operation>(value)) == Primitive{0}) return false;
  return operation_primitive(static_cast<Operation>(kLastValue + 1)) == Primitive{0};
}
static_assert(every_value_is_an_operation(), "Operation::kLast must be the last operation");
// The rwlock ranges are exactly the rwlock's acquisitions, read side then write side.
constexpr bool rwlock_ranges_match() {
  for (uint16_t value = 1; value <= kLastValue; ++value) {
    const auto op = static_cast<Operation>(value);
    const bool rwlock_acquire = operation_primitive(op) == Primitive::kRwLock &&
                                operation_class(op) == OperationClass::kAcquire;
    if (rwlock_acquire != (is_read_side(op) || is_write_side(op))) return false;
    if (is_read_side(op) && is_write_side(op)) return false;
  }
  return true;
}
static_assert(rwlock_ranges_match(),
              "is_read_side/is_write_side must cover the rwlock acquisitions");
// Every primitive has an operation, and none beyond Primitive::kLast is named.
constexpr bool every_primitive_has_an_operation() {
  bool seen[kPrimitiveSlots] = {};
  for (uint16_t value = 1; value <= kLastValue; ++value) {
    const auto primitive =
        static_cast<uint32_t>(operation_primitive(static_cast<Operation>(value)));
    if (primitive > static_cast<uint32_t>(Primitive::kLast)) return false;
    seen[primitive] = true;
  }
  for (uint32_t p = 1; p <= static_cast<uint32_t>(Primitive::kLast); ++p)
    if (!seen[p]) return false;
  return true;
}
static_assert(every_primitive_has_an_operation());
}  // namespace operations_checked

}  // namespace lockscope::format
