// Lock identity events: init starts a generation (and records type, flags and init site), destroy
// ends one. Called after the real function succeeded; errno is preserved.
#pragma once

#include <pthread.h>

#include <cstdint>

namespace lockscope::runtime {
void note_mutex_init(const pthread_mutex_t* mutex, const pthread_mutexattr_t* attr, uintptr_t site);
void note_mutex_destroy(const pthread_mutex_t* mutex);
}  // namespace lockscope::runtime
