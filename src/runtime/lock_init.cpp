#include "runtime/lock_init.h"

#include "common/profile_format.h"
#include "runtime/errno_guard.h"
#include "runtime/runtime_state.h"

namespace lockscope::runtime {
namespace {

uint32_t mutex_kind(const pthread_mutexattr_t* attr) {
  if (!attr) return static_cast<uint32_t>(format::MutexKind::kNormal);
  int type = 0;
  if (pthread_mutexattr_gettype(attr, &type) != 0) return 0;
  switch (type) {
    case PTHREAD_MUTEX_RECURSIVE:
      return static_cast<uint32_t>(format::MutexKind::kRecursive);
    case PTHREAD_MUTEX_ERRORCHECK:
      return static_cast<uint32_t>(format::MutexKind::kErrorCheck);
    case PTHREAD_MUTEX_ADAPTIVE_NP:
      return static_cast<uint32_t>(format::MutexKind::kAdaptive);
    default:
      return static_cast<uint32_t>(format::MutexKind::kNormal);
  }
}

uint32_t mutex_flags(const pthread_mutexattr_t* attr) {
  uint32_t flags = format::kLockInitSeen;
  if (!attr) return flags;
  int value = 0;
  if (pthread_mutexattr_getpshared(attr, &value) == 0 && value == PTHREAD_PROCESS_SHARED)
    flags |= format::kLockProcessShared;
  if (pthread_mutexattr_getrobust(attr, &value) == 0 && value == PTHREAD_MUTEX_ROBUST)
    flags |= format::kLockRobust;
  if (pthread_mutexattr_getprotocol(attr, &value) == 0) {
    if (value == PTHREAD_PRIO_INHERIT) flags |= format::kLockPriorityInherit;
    if (value == PTHREAD_PRIO_PROTECT) flags |= format::kLockPriorityProtect;
  }
  return flags;
}

}  // namespace

// Runs `update(table, slot number)` on the lock's slot when the thread records (not during the
// bootstrap or from inside lockscope: the identity then stays implicit), errno intact; a full
// table counts a dropped lock.
template <typename Update>
void with_lock_slot(const void* lock, Update update) {
  if (!current_thread()) return;
  const ErrnoGuard keep_errno;
  Runtime& rt = runtime();
  const uint32_t index = rt.locks.find_or_insert(reinterpret_cast<uintptr_t>(lock));
  if (index == LockTable::kNoSlot)
    rt.count(format::Counter::kDroppedLocks);
  else
    update(rt, index);
}

void note_lock_init(const void* lock, format::Primitive primitive, uint32_t kind, uint32_t flags,
                    uint32_t capacity, uintptr_t site) {
  with_lock_slot(lock, [&](Runtime& rt, uint32_t index) {
    LockSlot& slot = rt.locks.slot(index);
    // Re-initialising an address that was used since its generation began starts a new one.
    if (slot.used.load(std::memory_order_relaxed)) {
      rt.locks.retire_generation(index);
      rt.identity_epoch.fetch_add(1, std::memory_order_release);
    }
    slot.primitive.store(static_cast<uint8_t>(primitive), std::memory_order_relaxed);
    slot.kind.store(static_cast<uint8_t>(kind), std::memory_order_relaxed);
    slot.flags.store(flags | format::kLockInitSeen, std::memory_order_relaxed);
    slot.capacity.store(capacity, std::memory_order_relaxed);
    slot.init_site.store(site, std::memory_order_relaxed);
  });
}

void note_mutex_init(const pthread_mutex_t* mutex, const pthread_mutexattr_t* attr,
                     uintptr_t site) {
  note_lock_init(mutex, format::Primitive::kMutex, mutex_kind(attr), mutex_flags(attr), 0, site);
}

void note_lock_flags(const void* lock, format::Primitive primitive, uint32_t flags) {
  with_lock_slot(lock, [&](Runtime& rt, uint32_t index) {
    LockSlot& slot = rt.locks.slot(index);
    if (slot.primitive.load(std::memory_order_relaxed) == 0)
      slot.primitive.store(static_cast<uint8_t>(primitive), std::memory_order_relaxed);
    slot.flags.fetch_or(flags, std::memory_order_relaxed);
  });
}

// Only a lock the table already has: a primitive destroyed without ever being used or initialised
// in sight (every unused global std::condition_variable, at exit) made an entry of its own, of
// kind "mutex", the kind a slot starts with.
void note_lock_destroy(const void* lock) {
  if (!current_thread()) return;
  Runtime& rt = runtime();
  const uint32_t index = rt.locks.find(reinterpret_cast<uintptr_t>(lock));
  if (index == LockTable::kNoSlot) return;
  LockSlot& slot = rt.locks.slot(index);
  slot.flags.fetch_or(format::kLockDestroyed, std::memory_order_relaxed);
  rt.locks.retire_generation(index);
  rt.identity_epoch.fetch_add(1, std::memory_order_release);
}

}  // namespace lockscope::runtime
