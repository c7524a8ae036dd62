// std::mutex, as the C++ programmer's baseline row.
//
// On libstdc++/Linux it is a thin wrapper over pthread_mutex_t (normal kind): same unfairness, same
// park-after-one-try behaviour. It is here to show that the wrapper costs nothing; if it ever
// differs from the `pthread` row, suspect the measurement first.
#pragma once

#include <mutex>
#include <string_view>

#include "bench/locks/lock_concept.h"

namespace lockscope::lab {

class StdMutex {
 public:
  static constexpr std::string_view kName = "std";

  StdMutex() = default;
  StdMutex(const StdMutex&) = delete;
  StdMutex& operator=(const StdMutex&) = delete;

  void lock() { mutex_.lock(); }
  void unlock() { mutex_.unlock(); }
  bool try_lock() { return mutex_.try_lock(); }

 private:
  std::mutex mutex_;
};

static_assert(Lockable<StdMutex>);

}  // namespace lockscope::lab
