// Lock identity events: init starts a generation (and records primitive, type, flags, capacity and
// init site), destroy ends one. Called after the real function succeeded; errno is preserved.
#pragma once

#include <pthread.h>

#include <cstdint>

#include "common/profile_format.h"

namespace lockscope::runtime {
void note_lock_init(const void* lock, format::Primitive primitive, uint32_t kind, uint32_t flags,
                    uint32_t capacity, uintptr_t site);
void note_lock_destroy(const void* lock);
// Adds `flags` to the lock's current generation (no new generation: a named semaphore opened again
// is the same semaphore).
void note_lock_flags(const void* lock, format::Primitive primitive, uint32_t flags);
void note_mutex_init(const pthread_mutex_t* mutex, const pthread_mutexattr_t* attr, uintptr_t site);
}  // namespace lockscope::runtime
