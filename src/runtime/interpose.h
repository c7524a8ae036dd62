// Shared by the interposed entry points (interpose_*.cpp).
#pragma once

#include <cstdint>

// The only symbols the runtime exports.
#define LOCKSCOPE_EXPORT extern "C" __attribute__((visibility("default")))
// The call site in the program: the return address of the interposed call.
#define CALL_SITE reinterpret_cast<uintptr_t>(__builtin_return_address(0))
