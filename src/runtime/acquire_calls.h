// The contract every interposed acquire form hands to acquire() (recorder_acquire.h): the real
// calls behind one form of one primitive (MutexLockCalls, RwLockCalls<...>, SemWaitCalls<...>,
// SpinLockCalls, ...), as a value the fast path copies into registers.
#pragma once

#include <concepts>

#include "common/profile_format.h"

namespace lockscope::runtime {

// Required: the form's operation and whether it blocks, and its two real calls, each returning
// 0 or an error number (errno-style forms convert). Optional members, detected where used:
//   try_acquire_fast()   an inline trylock (a mutex's: inline_trylock.h), else try_acquire()
//   owner_word()         the lock's own owner word (lock_owner.h), else its slot keeps the owner
//   try_is_unsafe(), robust(), held_by(tid)   robust mutexes (not-recoverable, owner died)
//   kTryErrorsAreFinal   the trylock-first's errors other than EBUSY are the call's answer
template <typename Calls>
concept AcquireCalls = std::copy_constructible<Calls> && requires(const Calls& calls) {
  { Calls::kOperation } -> std::convertible_to<format::Operation>;
  { Calls::kBlocking } -> std::convertible_to<bool>;
  { calls.try_acquire() } -> std::same_as<int>;
  { calls.blocking_acquire() } -> std::same_as<int>;
};

}  // namespace lockscope::runtime
