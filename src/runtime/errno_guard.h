// ErrnoGuard: keeps the program's errno across lockscope's own work (DESIGN.md, hot-path rule 5:
// "return exactly what the real function returned, errno intact"). The runtime's own calls (mmap,
// futex, open, sched_getcpu, an unwinder) may fail and leave a value in errno that the program
// never caused; declared at the top of a scope, the guard puts back what errno held when the scope
// began, on every path out of it.
//
// It is a save in the constructor and a store in the destructor, both inline: the same two
// instructions as the hand-written pair it replaces (the runtime is built -fno-exceptions, so
// there is no unwinding path to add). Where errno must end as something else on purpose (an
// interposed call that fails leaves the error of the real call; a first try that restores errno
// only when it failed), the code says so by hand, not with a guard.
#pragma once

#include <errno.h>

namespace lockscope::runtime {

class ErrnoGuard {
 public:
  [[gnu::always_inline]] ErrnoGuard() : saved_(errno) {}
  [[gnu::always_inline]] ~ErrnoGuard() { errno = saved_; }
  ErrnoGuard(const ErrnoGuard&) = delete;
  ErrnoGuard& operator=(const ErrnoGuard&) = delete;

 private:
  const int saved_;
};

}  // namespace lockscope::runtime
