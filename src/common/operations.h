// The operations a profile counts (SiteRecord::operation, TraceEvent::operation) and what each one
// is: the primitive it acts on and its class (acquire, release, wait, event). Part of the on-disk
// format (profile_format.h includes it): values are never reordered or reused, new ones go at the
// end and move kLast.
//
// operation_kind() is one switch that names every operation, no default: an operation added
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

// What an operation is: the primitive it acts on, and its role: an acquisition of a lock (held
// until released), a release, a wait that holds nothing afterwards (condition, semaphore, barrier,
// re-acquire), or a plain event (signal, post). primitive is Primitive{0} for a value that is not
// an operation.
struct OperationKind {
  Primitive primitive;
  OperationClass role;
};

// clang-format off
constexpr OperationKind operation_kind(Operation op) {
  using enum Primitive;
  using enum OperationClass;
  switch (op) {
    case Operation::kLock:           return {kMutex,     kAcquire};
    case Operation::kTryLock:        return {kMutex,     kAcquire};
    case Operation::kTimedLock:      return {kMutex,     kAcquire};
    case Operation::kClockLock:      return {kMutex,     kAcquire};
    case Operation::kUnlock:         return {kMutex,     kRelease};
    case Operation::kReadLock:       return {kRwLock,    kAcquire};
    case Operation::kTryReadLock:    return {kRwLock,    kAcquire};
    case Operation::kTimedReadLock:  return {kRwLock,    kAcquire};
    case Operation::kClockReadLock:  return {kRwLock,    kAcquire};
    case Operation::kWriteLock:      return {kRwLock,    kAcquire};
    case Operation::kTryWriteLock:   return {kRwLock,    kAcquire};
    case Operation::kTimedWriteLock: return {kRwLock,    kAcquire};
    case Operation::kClockWriteLock: return {kRwLock,    kAcquire};
    case Operation::kReadUnlock:     return {kRwLock,    kRelease};
    case Operation::kWriteUnlock:    return {kRwLock,    kRelease};
    case Operation::kCondWait:       return {kCondVar,   kWait};
    case Operation::kCondTimedWait:  return {kCondVar,   kWait};
    case Operation::kCondClockWait:  return {kCondVar,   kWait};
    case Operation::kCondSignal:     return {kCondVar,   kEvent};
    case Operation::kCondBroadcast:  return {kCondVar,   kEvent};
    case Operation::kCondReacquire:  return {kMutex,     kWait};
    case Operation::kSpinLock:       return {kSpinLock,  kAcquire};
    case Operation::kSpinTryLock:    return {kSpinLock,  kAcquire};
    case Operation::kSemWait:        return {kSemaphore, kWait};
    case Operation::kSemTryWait:     return {kSemaphore, kWait};
    case Operation::kSemTimedWait:   return {kSemaphore, kWait};
    case Operation::kSemClockWait:   return {kSemaphore, kWait};
    case Operation::kSemPost:        return {kSemaphore, kEvent};
    case Operation::kBarrierWait:    return {kBarrier,   kWait};
    case Operation::kCondWake:       return {kCondVar,   kWait};
  }
  return {Primitive{0}, kAcquire};  // not an operation (readers refuse those)
}
// clang-format on

constexpr OperationClass operation_class(Operation op) {
  return operation_kind(op).role;
}
constexpr Primitive operation_primitive(Operation op) {
  return operation_kind(op).primitive;
}

constexpr bool is_acquire(Operation op) {
  return operation_class(op) == OperationClass::kAcquire;
}
// Ranges, for the hot path; tied to operation_kind() by the static_asserts below.
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
