// Shared by the interposed entry points (interpose_*.cpp).
#pragma once

#include <cstdint>

// The only symbols the runtime exports.
#define LOCKSCOPE_EXPORT extern "C" __attribute__((visibility("default")))
// The call site in the program: the return address of the interposed call.
#define CALL_SITE reinterpret_cast<uintptr_t>(__builtin_return_address(0))

#include <pthread.h>

#include "common/profile_format.h"

namespace lockscope::runtime {
// format::kLockProcessShared when a primitive's attributes say PTHREAD_PROCESS_SHARED.
template <typename Attributes>
uint32_t process_shared_flag(const Attributes* attributes,
                             int (*get_pshared)(const Attributes*, int*)) {
  int shared = PTHREAD_PROCESS_PRIVATE;
  if (attributes && get_pshared(attributes, &shared) == 0 && shared == PTHREAD_PROCESS_SHARED)
    return format::kLockProcessShared;
  return 0;
}
}  // namespace lockscope::runtime
