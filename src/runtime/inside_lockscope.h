// The inside-lockscope mark: a thread running lockscope's own code says so, and its interposed
// calls (and those of a signal handler that interrupts it) then pass through unrecorded.
//
// The lowest layer of the runtime's state: a table that takes an internal lock marks itself with
// it (lock_table.cpp), and the per-thread state (thread_state.h) and the process's
// (runtime_state.h) are built above it.
#pragma once

namespace lockscope::runtime {

struct ThreadState;  // thread_state.h

// __thread, not thread_local: no TLS wrapper call on the hot path (initial-exec, constant init).
extern __thread ThreadState* tls_thread;
// Marks the calling thread as inside lockscope for the scope's lifetime: its own interposed calls,
// and those of a signal handler that interrupts it, pass through unrecorded. Nests.
//
// The order of the two stores matters, and the compiler must keep it (a signal fence): a signal
// handler that locks between them must see either the thread (it records, as before or after the
// scope) or the mark (it passes through), never neither, where it would register the thread a
// second slot and the thread's counts would be split (seen in trace mode, whose every event
// enters a scope: a thread reported with 2 acquisitions of its 8,206).
extern __thread bool tls_inside;
// A fork child whose forking signal handler interrupted lockscope's own code, which goes on there
// and may be half-way through the tables: they are reset once it leaves lockscope
// (let_go_of_parent_tables). Set and cleared in thread_lifecycle.cpp; here, not in
// Runtime, so that the units below the runtime can mark themselves inside lockscope.
extern bool g_parent_tables_pending;
// g_parent_tables_pending's work, when the code a forking signal handler interrupted leaves
// lockscope (the end of the outermost InsideLockscope scope, or of a thread's registration): the
// child's tables, thread slots and traces are reset as after_fork_in_child resets them otherwise.
void let_go_of_parent_tables();
class InsideLockscope {
 public:
  InsideLockscope() : saved_(tls_thread), was_inside_(tls_inside) {
    tls_inside = true;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    tls_thread = nullptr;
  }
  ~InsideLockscope() {
    if (!was_inside_ && __builtin_expect(g_parent_tables_pending, 0)) let_go_of_parent_tables();
    tls_thread = saved_;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    tls_inside = was_inside_;
  }
  InsideLockscope(const InsideLockscope&) = delete;
  InsideLockscope& operator=(const InsideLockscope&) = delete;

 private:
  ThreadState* saved_;
  bool was_inside_;
};

// True while the calling thread runs lockscope's own code (an InsideLockscope scope).
inline bool inside_lockscope() {
  return tls_inside;
}

}  // namespace lockscope::runtime
