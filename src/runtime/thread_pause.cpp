#include "runtime/thread_pause.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include "runtime/byte_buffer.h"
#include "runtime/cancellation.h"
#include "runtime/errno_guard.h"
#include "runtime/own_proc_files.h"
#include "runtime/runtime_state.h"

namespace lockscope::runtime {
namespace {

bool recording(const ThreadState& t) {
  const auto state = static_cast<SlotState>(t.state.load(std::memory_order_acquire));
  return (state == SlotState::kLive || state == SlotState::kExiting) && t.tid != 0;
}

// The kernel's word that the thread sleeps in a system call (state S): not on a fast path, which
// makes none. A page fault (D) or a stop (T, t) may come anywhere, a fast path included.
bool asleep_in_kernel(uint32_t pid, uint32_t tid) {
  NoCancellation no_cancellation;  // no cancellation point of ours (cancellation.h)
  char path[64];
  snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", pid, tid);
  char stat[512];
  errno = 0;
  const char* fields = read_stat_fields(path, stat);
  if (fields == nullptr) return errno == ENOENT;  // gone
  // Sleeping; or gone, its task left as a zombie: a main thread that called pthread_exit while
  // the others run on (it was waited for, and noted as "could not stop").
  return fields[0] == 'S' || fields[0] == 'Z' || fields[0] == 'X';
}

// Stopped for the writer: at a pause point, or inside a real blocking call (whose end is one).
bool stopped(const ThreadState& t) {
  return t.paused.load(std::memory_order_acquire) != 0 ||
         __atomic_load_n(&t.blocked.lock, __ATOMIC_ACQUIRE) != nullptr;
}

// Sleeps while `word` holds `value`, for at most `ns`.
void futex_wait_for(std::atomic<uint32_t>& word, uint32_t value, uint64_t ns) {
  const timespec timeout{static_cast<time_t>(ns / 1'000'000'000),
                         static_cast<long>(ns % 1'000'000'000)};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, value, &timeout,
          nullptr, 0);
}

void wake_paused_threads(Runtime& rt) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&rt.pause_requested), FUTEX_WAKE_PRIVATE,
          0x7fffffff, nullptr, nullptr, 0);
}

// Takes the pause bit out of every thread's epoch: their fast paths hit again, and their holds
// carry an epoch their releases recognise (a hold begun with the bit is never timed).
void clear_pause_bits(Runtime& rt) {
  for (size_t i = 0; i < rt.threads.slot_count(); ++i)
    __atomic_fetch_and(&rt.threads.slot(i).epoch, ~kPauseEpochBit, __ATOMIC_RELAXED);
}

// Pause `request` lasted kMaxPauseNs for a thread that waited for it: every paused thread goes
// on, unless the writer ended it meanwhile. The bits first (so that no hold begins with one
// while nothing is requested), then the request, only if still this one: the writer's resume
// finds it gone (resume_other_threads).
void give_up_pause(Runtime& rt, uint32_t request) {
  clear_pause_bits(rt);
  uint32_t expected = request;
  if (rt.pause_requested.compare_exchange_strong(expected, 0, std::memory_order_seq_cst))
    wake_paused_threads(rt);
}

void pause_for_ns(long ns) {
  const timespec pause{0, ns};
  syscall(SYS_nanosleep, &pause, nullptr);
}

}  // namespace

uint32_t pause_other_threads(Runtime& rt) {
  const auto me = static_cast<uint32_t>(syscall(SYS_gettid));
  rt.pause_number = rt.pause_number + 1 != 0 ? rt.pause_number + 1 : 1;
  rt.pause_requested.store(rt.pause_number, std::memory_order_seq_cst);
  ByteBuffer pending_buffer;
  size_t pending = 0;
  for (size_t i = 0; i < rt.threads.slot_count(); ++i) {
    ThreadState& t = rt.threads.slot(i);
    if (!recording(t) || t.tid == me) continue;
    __atomic_fetch_or(&t.epoch, kPauseEpochBit, __ATOMIC_RELAXED);
    const auto index = static_cast<uint32_t>(i);
    if (pending_buffer.append(&index, sizeof(index))) ++pending;
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // Given up already (a signal handler of this thread ran in the loop above for more than
  // kMaxPauseNs): the bits set since would leave those threads' holds untimed.
  if (rt.pause_requested.load(std::memory_order_seq_cst) != rt.pause_number) clear_pause_bits(rt);
  auto* slots = reinterpret_cast<uint32_t*>(pending_buffer.data());
  const uint64_t began = Clock::monotonic_ns();
  for (uint32_t round = 0; pending != 0; ++round) {
    const uint64_t waited = Clock::monotonic_ns() - began;
    // A thread that locks at all reaches a pause point within microseconds: the kernel is only
    // asked about those that did not.
    const bool ask_kernel = waited > 500'000;
    size_t kept = 0;
    for (size_t i = 0; i < pending; ++i) {
      const ThreadState& t = rt.threads.slot(slots[i]);
      if (!recording(t) || stopped(t) || (ask_kernel && asleep_in_kernel(rt.pid, t.tid))) continue;
      slots[kept++] = slots[i];
    }
    pending = kept;
    if (pending == 0 || waited > kPauseWaitNs) break;
    if (round < 20)
      sched_yield();
    else
      pause_for_ns(100'000);
  }
  for (size_t i = 0; i < rt.threads.slot_count(); ++i)
    rt.threads.slot(i).calls_when_paused = calls_made(rt.threads.slot(i));
  return static_cast<uint32_t>(pending);
}

bool resume_other_threads(Runtime& rt) {
  clear_pause_bits(rt);
  const bool held = rt.pause_requested.exchange(0, std::memory_order_seq_cst) == rt.pause_number;
  wake_paused_threads(rt);
  return held;
}

void wait_while_paused(ThreadState& self) {
  Runtime& rt = g_runtime;
  const ErrnoGuard keep_errno;  // the futex waits' EAGAIN, ETIMEDOUT, EINTR
  const uint32_t was_paused = self.paused.load(std::memory_order_relaxed);  // a handler's nest
  uint32_t request = 0;  // the pause waited for, and since when (each pause gets its own time)
  uint64_t began = 0;
  for (;;) {
    self.paused.store(1, std::memory_order_seq_cst);
    for (;;) {
      const uint32_t current = rt.pause_requested.load(std::memory_order_acquire);
      if (current == 0) break;
      const uint64_t now = Clock::monotonic_ns();
      if (current != request) {
        request = current;
        began = now;
      }
      if (now - began >= kMaxPauseNs) {
        give_up_pause(rt, current);  // the writer is not coming back (see kMaxPauseNs)
        continue;
      }
      futex_wait_for(rt.pause_requested, current, kMaxPauseNs - (now - began));
    }
    if (was_paused) break;
    // No longer paused, then the request read again: a writer that began meanwhile either sees
    // the mark gone (and waits for this thread) or is seen here.
    self.paused.store(0, std::memory_order_seq_cst);
    if (rt.pause_requested.load(std::memory_order_seq_cst) == 0) break;
  }
}

}  // namespace lockscope::runtime
