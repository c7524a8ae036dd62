// What the runtime reads of glibc's own lock objects, named: the kind bits of a mutex's __kind,
// the cookies of its __owner, the values of its lock word, an rwlock's reader count and a
// semaphore's waiter count. glibc keeps them internal (nptl/pthreadP.h,
// sysdeps/nptl/internaltypes.h, sysdeps/nptl/lowlevellock.h); the runtime reads them to decide
// what its fast path may do (inline_trylock.h), where it may keep a lock's owner (lock_owner.h)
// and who a waiter waited for (interpose_mutex.cpp, interpose_rwlock.cpp, interpose_semaphore.cpp).
//
// Read from glibc 2.36 (Debian 12, x86-64). The structs are the public ones of <pthread.h>
// (sysdeps/x86/nptl/bits/struct_mutex.h, bits/struct_rwlock.h, installed under
// /usr/include/x86_64-linux-gnu/bits/): their field offsets and sizes are checked below at compile
// time. The values inside the fields are glibc's private protocol and cannot be checked here; a
// unit test (tests/unit/glibc_lock_layout_test.cpp) checks each against the glibc it runs on
// (Debian 12's 2.36-9 when this was written): a glibc that changes one fails that test.
#pragma once

#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stddef.h>

#include <cstdint>

namespace lockscope::runtime::glibc {

// --- pthread_mutex_t::__data.__kind (nptl/pthreadP.h, the "Internal mutex type value" enum) ---
// The low two bits: the public type (PTHREAD_MUTEX_KIND_MASK_NP); above them, one bit each.
inline constexpr int kMutexKindMask = 3;         // PTHREAD_MUTEX_KIND_MASK_NP
inline constexpr int kMutexNormal = 0;           // PTHREAD_MUTEX_TIMED_NP
inline constexpr int kMutexRecursive = 1;        // PTHREAD_MUTEX_RECURSIVE_NP
inline constexpr int kMutexErrorCheck = 2;       // PTHREAD_MUTEX_ERRORCHECK_NP
inline constexpr int kMutexAdaptive = 3;         // PTHREAD_MUTEX_ADAPTIVE_NP
inline constexpr int kMutexRobust = 16;          // PTHREAD_MUTEX_ROBUST_NORMAL_NP
inline constexpr int kMutexPrioInherit = 32;     // PTHREAD_MUTEX_PRIO_INHERIT_NP
inline constexpr int kMutexPrioProtect = 64;     // PTHREAD_MUTEX_PRIO_PROTECT_NP
inline constexpr int kMutexProcessShared = 128;  // PTHREAD_MUTEX_PSHARED_BIT
inline constexpr int kMutexElision = 256;        // PTHREAD_MUTEX_ELISION_NP
// What glibc's PTHREAD_MUTEX_TYPE reads (all but the process-shared bit and the elision flags),
// and PTHREAD_MUTEX_TYPE_ELISION (the same with the elision flag, which selects a path too).
inline constexpr int kMutexTypeMask = 127;
inline constexpr int kMutexTypeElisionMask = kMutexTypeMask | kMutexElision;
// The type and the process-shared bit: the kind's low byte.
inline constexpr int kMutexTypeSharedMask = kMutexTypeMask | kMutexProcessShared;

static_assert((kMutexKindMask & (kMutexRobust | kMutexPrioInherit | kMutexPrioProtect |
                                 kMutexProcessShared | kMutexElision)) == 0,
              "the kind's flag bits lie above its two type bits");
static_assert(kMutexTypeSharedMask == 0xFF && (kMutexTypeMask & kMutexProcessShared) == 0);
// The public types and static initializers agree with the kind values above.
static_assert(PTHREAD_MUTEX_TIMED_NP == kMutexNormal &&
              PTHREAD_MUTEX_RECURSIVE_NP == kMutexRecursive &&
              PTHREAD_MUTEX_ERRORCHECK_NP == kMutexErrorCheck &&
              PTHREAD_MUTEX_ADAPTIVE_NP == kMutexAdaptive);
namespace initializers {
inline constexpr pthread_mutex_t kNormal = PTHREAD_MUTEX_INITIALIZER;
inline constexpr pthread_mutex_t kRecursive = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
inline constexpr pthread_mutex_t kErrorCheck = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
inline constexpr pthread_mutex_t kAdaptive = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
}  // namespace initializers
static_assert(initializers::kNormal.__data.__kind == kMutexNormal &&
              initializers::kRecursive.__data.__kind == kMutexRecursive &&
              initializers::kErrorCheck.__data.__kind == kMutexErrorCheck &&
              initializers::kAdaptive.__data.__kind == kMutexAdaptive);

// --- pthread_mutex_t::__data.__owner of a robust mutex (nptl/pthreadP.h) ---
inline constexpr int kMutexInconsistent = INT_MAX;        // PTHREAD_MUTEX_INCONSISTENT: owner died
inline constexpr int kMutexNotRecoverable = INT_MAX - 1;  // PTHREAD_MUTEX_NOTRECOVERABLE
static_assert(kMutexNotRecoverable == 0x7ffffffe);

// --- pthread_mutex_t::__data.__lock of a normal, error-checking or adaptive mutex ---
// sysdeps/nptl/lowlevellock.h: 0 free, 1 taken with no waiter, 2 taken and a thread may be waiting
// (a waiter sets it so before its futex wait).
inline constexpr int kLockWordFree = 0;
inline constexpr int kLockWordTaken = 1;
inline constexpr int kLockWordContended = 2;

// --- pthread_rwlock_t::__data.__readers (nptl/pthreadP.h, nptl/pthread_rwlock_common.c) ---
// Its low three bits are state flags (WRPHASE, WRLOCKED, RWAITING); the readers count above them.
inline constexpr unsigned kRwlockReaderShift = 3;  // PTHREAD_RWLOCK_READER_SHIFT

// --- sem_t (sysdeps/nptl/internaltypes.h, struct new_sem on a 64-bit glibc) ---
// One 64-bit word: the value in its low 32 bits, the threads blocked in a wait in its high 32.
inline constexpr unsigned kSemWaitersShift = 32;  // SEM_NWAITERS_SHIFT

// --- Where the fields are: checked against <pthread.h> and <semaphore.h> ---
#if defined(__x86_64__) && !defined(__ILP32__)
static_assert(sizeof(pthread_mutex_t) == 40);
static_assert(offsetof(pthread_mutex_t, __data.__lock) == 0);
static_assert(offsetof(pthread_mutex_t, __data.__count) == 4);
static_assert(offsetof(pthread_mutex_t, __data.__owner) == 8);
static_assert(offsetof(pthread_mutex_t, __data.__nusers) == 12);
static_assert(offsetof(pthread_mutex_t, __data.__kind) == 16);
// The owner word (lock_owner.h) shares the lock word's cache line.
static_assert(offsetof(pthread_mutex_t, __data.__count) / 64 ==
              offsetof(pthread_mutex_t, __data.__lock) / 64);
static_assert(sizeof(pthread_rwlock_t) == 56);
static_assert(offsetof(pthread_rwlock_t, __data.__readers) == 0);
static_assert(offsetof(pthread_rwlock_t, __data.__cur_writer) == 24);
static_assert(sizeof(sem_t) == 32 && alignof(sem_t) >= alignof(uint64_t),
              "a semaphore's first 8 bytes are glibc's 64-bit data word");
#endif

}  // namespace lockscope::runtime::glibc
