// A thread's slot over its life, and the process identity the slots carry: what start-up, exit
// and fork (lifecycle.cpp, process_exit.cpp) call of thread_lifecycle.cpp. (Its entries for the
// runtime's own inline code, current_thread_slow and let_go_of_parent_tables, are declared where
// that code is: runtime_state.h, inside_lockscope.h.)
#pragma once

#include <cstdint>

namespace lockscope::runtime {

struct Runtime;

// The process's and its parent's ids, start times and CPUs, at start-up and in a fork child.
void reset_process_identity(Runtime& rt);
// The thread's pthread key destructor (registered at start-up).
void thread_exit_destructor(void* value);
// A fork child's state, in two steps around its running marker (lifecycle.cpp,
// after_fork_in_child): its identity (false: the runtime was not ready, nothing to reset), then its
// locks, counters and tables.
bool reset_identity_in_fork_child();
void reset_state_in_fork_child();
// True when any lock operation was recorded in this process image (so an exec that follows a
// fork with no locking in between leaves no empty file behind).
bool has_recorded_events();
// Reads /proc/self/task/<tid>/comm into `name` (keeps the old name on failure).
void read_thread_name(uint32_t tid, char (&name)[16]);

}  // namespace lockscope::runtime
