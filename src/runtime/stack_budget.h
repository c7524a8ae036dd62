// The time budget of stack capture (capture_stack_at in recorder.cpp): captures are allowed while
// they took at most 1 % of the thread's time alive so far, plus 1 ms to start with. A DWARF walk
// costs microseconds, and a lock-heavy program contends hundreds of thousands of times a second.
// (Of its time alive, not its CPU time: the CPU time is a system call, and a thread that mostly
// waits would keep the stacks of few of its waits.) The same rule bounds the process-wide budget
// of the captures that every thread makes often and no one waits on (timed holds, lock-order
// edges): `alive` is then the process's time, `spent` all threads' charges.
//
// A capture is timed by the clock around it, so a thread descheduled mid-walk (a busy machine) or
// a walk that first touches cold unwind tables would be charged milliseconds it did not spend
// walking; one such charge used to stop a short-lived thread's captures for the rest of its life.
// Each capture is charged at most kMaxChargeSeconds (~30 DWARF walks of 32 frames).
#pragma once

#include <cstdint>

namespace lockscope::runtime {

struct StackBudget {
  static constexpr double kMaxChargeSeconds = 100e-6;
  static constexpr double kStartAllowanceSeconds = 1e-3;

  // May a capture start `alive` ticks after the thread was first seen, when its captures were
  // charged `spent` ticks so far?
  static bool allows(uint64_t spent, uint64_t alive, double ticks_per_second) {
    const auto allowance = static_cast<uint64_t>(ticks_per_second * kStartAllowanceSeconds);
    return spent * 100 <= alive + allowance * 100;
  }

  // The ticks a capture that took `elapsed` is charged.
  static uint64_t charge(uint64_t elapsed, double ticks_per_second) {
    const auto most = static_cast<uint64_t>(ticks_per_second * kMaxChargeSeconds);
    return elapsed < most ? elapsed : most;
  }
};

}  // namespace lockscope::runtime
