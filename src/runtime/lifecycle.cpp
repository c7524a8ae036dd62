// The runtime's life in one process image: its start (the first lock call or the library's
// constructor, whichever comes first: ensure_initialized), the configuration it reads then
// (LOCKSCOPE_CONFIG), the hook on main that learns the exit status, and fork. The top layer of
// src/runtime/: it wires the writers (process_exit.cpp, fatal_signals.cpp, running_marker.cpp) to
// the recording below, which never calls them itself (a due snapshot is requested through
// Runtime::write_snapshot). No header: its entry points are the interposed __libc_start_main, the
// constructor, the pthread_atfork handlers and ensure_initialized (declared in runtime_state.h,
// reached from below by the first lock call of the process).
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>

#include "common/config_string.h"
#include "runtime/cancellation.h"
#include "runtime/errno_guard.h"
#include "runtime/fatal_signals.h"
#include "runtime/inline_trylock.h"
#include "runtime/interpose.h"
#include "runtime/process_exit.h"
#include "runtime/raw_log.h"
#include "runtime/real_functions.h"
#include "runtime/recorder.h"
#include "runtime/running_marker.h"
#include "runtime/runtime_state.h"
#include "runtime/stack_capture.h"
#include "runtime/thread_lifecycle.h"
#include "runtime/trace_writer.h"

extern char** environ;

namespace lockscope::runtime {
namespace {

// Code in an executable's .preinit_array runs before libc has set `environ`, so a lock taken there
// initialises us with getenv() still blind: read the variable from /proc/self/environ instead.
const char* config_from_proc(char* buffer, size_t size) {
  NoCancellation no_cancellation;  // no cancellation point of ours (cancellation.h)
  const int fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  size_t total = 0;
  for (ssize_t got; total < size - 1 && (got = read(fd, buffer + total, size - 1 - total)) > 0;)
    total += static_cast<size_t>(got);
  close(fd);
  buffer[total] = '\0';
  const size_t name_length = std::strlen(config::kVariable);
  for (size_t at = 0; at < total; at += std::strlen(buffer + at) + 1)
    if (std::strncmp(buffer + at, config::kVariable, name_length) == 0 &&
        buffer[at + name_length] == '=')
      return buffer + at + name_length + 1;
  return nullptr;
}

// The UnwindMode an unwind= value names (config::kUnwindNames), or -1.
int unwind_mode_named(const char* value, size_t length) {
  for (size_t mode = 0; mode < config::kUnwindModes; ++mode)
    if (ConfigString::key_is(value, length, config::kUnwindNames[mode]))
      return static_cast<int>(mode);
  return -1;
}

// A value of `length` bytes that is exactly `expected`.
bool value_is(const char* value, size_t length, const char* expected) {
  return ConfigString::key_is(value, length, expected);
}

void parse_config(Runtime& rt, uint64_t& tsc_hz, uint64_t& snapshot_ms) {
  static_assert(sizeof(config::kDefaultDirectory) <= sizeof(rt.directory));
  std::strcpy(rt.directory, config::kDefaultDirectory);
  static char environment_copy[65536];
  const char* text = environ ? getenv(config::kVariable)
                             : config_from_proc(environment_copy, sizeof(environment_copy));
  if (!text) return;
  const bool ok = ConfigString::for_each(text, [&](const char* key, size_t key_length,
                                                   const char* value, size_t value_length) {
    auto key_is = [&](const char* expected) {
      return ConfigString::key_is(key, key_length, expected);
    };
    uint64_t number = 0;
    auto number_in = [&](uint64_t low, uint64_t high) {
      return ConfigString::parse_u64(value, value_length, number) && number >= low &&
             number <= high;
    };
    if (key_is(config::kDirectoryKey) && value_length < sizeof(rt.directory)) {
      std::memcpy(rt.directory, value, value_length);
      rt.directory[value_length] = '\0';
    } else if (key_is(config::kHoldSampleKey) && number_in(1, config::kMaxHoldSamplePeriod)) {
      rt.hold_sample_period = static_cast<uint32_t>(number);
    } else if (key_is(config::kStackDepthKey) && number_in(0, config::kMaxStackDepth)) {
      rt.stack_depth = static_cast<uint32_t>(number);
    } else if (key_is(config::kUnwindKey) && unwind_mode_named(value, value_length) >= 0) {
      rt.unwind_mode = static_cast<uint8_t>(unwind_mode_named(value, value_length));
    } else if (key_is(config::kStacksKey) && value_is(value, value_length, config::kStacksAll)) {
      rt.all_stacks = true;
    } else if (key_is(config::kSnapshotKey) && number_in(0, config::kMaxSnapshotMs)) {
      snapshot_ms = number;
    } else if (key_is(config::kTraceKey)) {
      rt.trace.enabled = value_is(value, value_length, "1");
    } else if (key_is(config::kTraceRingKey)) {
      rt.trace.ring = value_is(value, value_length, "1");
    } else if (key_is(config::kTraceSizeKey) &&
               number_in(config::kMinTraceSize, config::kMaxTraceSize)) {
      rt.trace.layout = trace_layout_for(number);
    } else if (key_is(config::kMinWaitKey) && number_in(0, UINT64_MAX)) {
      rt.trace.min_wait_ns = number;
    } else if (key_is(config::kLogWritesKey)) {
      rt.log_writes = value_is(value, value_length, "1");
    } else if (key_is(config::kTscHzKey) && number_in(0, UINT64_MAX)) {
      tsc_hz = number;
    } else if (key_is(config::kParentKey)) {
      // set by a profiled parent for its exec'd children: informational only
    } else {
      RawLine().append("ignoring unknown setting in LOCKSCOPE_CONFIG").emit();
    }
    return true;
  });
  if (!ok) RawLine().append("LOCKSCOPE_CONFIG is malformed; using defaults").emit();
}

// The forking thread's trace (if any) is parked from here to the end of the fork (trace_writer.h).
void before_fork() {
  ThreadState* self = tls_thread;
  if (self == nullptr) return;
  sink().thread_event(*self, format::TraceKind::kFork);
  park_trace(self->trace);
}

void after_fork_in_parent() {
  if (ThreadState* self = tls_thread) unpark_trace(self->trace);
}

// The child's state (thread_lifecycle.cpp), with its own running marker between its new identity
// and the rest.
void after_fork_in_child() {
  if (!reset_identity_in_fork_child()) return;
  create_running_marker();
  reset_state_in_fork_child();
}

}  // namespace

bool ensure_initialized() {
  Runtime& rt = g_runtime;
  int expected = static_cast<int>(RuntimeStatus::kUninitialized);
  if (!rt.status.compare_exchange_strong(expected, static_cast<int>(RuntimeStatus::kInitializing),
                                         std::memory_order_acq_rel))
    return expected == static_cast<int>(RuntimeStatus::kReady);
  const ErrnoGuard keep_errno;
  tls_inside = true;
  remember_stderr();  // before anything may log
  resolve_real_functions();
  rt.inline_trylock_tid_offset = inline_trylock_tid_offset();
  uint64_t tsc_hz = 0, snapshot_ms = 0;
  parse_config(rt, tsc_hz, snapshot_ms);
  rt.clock.initialize(tsc_hz);
  if (rt.trace.enabled) {
    rt.trace.min_wait_ticks = static_cast<uint64_t>(static_cast<double>(rt.trace.min_wait_ns) *
                                                    rt.clock.ticks_per_second / 1e9);
    if (rt.trace.min_wait_ns != 0 && rt.trace.min_wait_ticks == 0) rt.trace.min_wait_ticks = 1;
    rt.sink = &kTraceSink;  // before any thread registers: chosen once
  }
  rt.write_snapshot = write_profile_snapshot;  // a lock call requests, the writer writes
  if (snapshot_ms) {
    rt.snapshot_interval_ticks =
        static_cast<uint64_t>(static_cast<double>(snapshot_ms) * rt.clock.ticks_per_second / 1e3);
    rt.next_snapshot_ticks.store(rt.clock.now() + rt.snapshot_interval_ticks);
  }
  reset_process_identity(rt);
  const bool ok = pthread_key_create(&rt.exit_key, thread_exit_destructor) == 0;
  if (ok) {
    pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
    install_fatal_signal_handlers();
    create_running_marker();
  } else {
    RawLine().append("cannot allocate its tables; the program runs unprofiled").emit();
  }
  tls_inside = false;
  rt.status.store(static_cast<int>(ok ? RuntimeStatus::kReady : RuntimeStatus::kFailed),
                  std::memory_order_release);
  return ok;
}

}  // namespace lockscope::runtime

using lockscope::runtime::runtime;

// exit() and returning from main. The profile is written by our library destructor, which the
// loader's finaliser runs after every exit handler and C++ static destructor of the program (their
// locks are recorded too). Only the exit status is learnt earlier, by an on_exit handler: it must
// be registered after __libc_start_main registers the loader's finaliser, or it would run after the
// write, so we wrap main.
static void remember_exit_status(int status, void*) {
  runtime().exit_status = status;
}

using MainFunction = int (*)(int, char**, char**);
static MainFunction g_program_main;

static int main_with_exit_handler(int argc, char** argv, char** envp) {
  on_exit(remember_exit_status, nullptr);
  return g_program_main(argc, argv, envp);
}

LOCKSCOPE_EXPORT int __libc_start_main(MainFunction main, int argc, char** argv, void (*init)(),
                                       void (*fini)(), void (*rtld_fini)(), void* stack_end) {
  using StartMain = int (*)(MainFunction, int, char**, void (*)(), void (*)(), void (*)(), void*);
  auto real_start = reinterpret_cast<StartMain>(dlsym(RTLD_NEXT, "__libc_start_main"));
  g_program_main = main;
  return real_start(main_with_exit_handler, argc, argv, init, fini, rtld_fini, stack_end);
}

__attribute__((constructor)) static void lockscope_start() {
  // Initialise and register the main thread now rather than at its first lock.
  lockscope::runtime::current_thread();
  // Here, not at a first capture: loading libgcc_s then could wait for the loader's lock while
  // a thread inside dlopen waits for a lock this one holds.
  if (runtime().stack_depth != 0 &&
      runtime().status.load(std::memory_order_acquire) ==
          static_cast<int>(lockscope::runtime::RuntimeStatus::kReady)) {
    lockscope::runtime::InsideLockscope inside;
    lockscope::runtime::init_stack_capture();
  }
  // Trace mode: a first snapshot now, so that a process killed later still has its module map and
  // command line beside its trace files.
  if (runtime().trace.enabled) lockscope::runtime::write_profile_snapshot();
  at_quick_exit(lockscope::runtime::write_profile_at_quick_exit);
}
