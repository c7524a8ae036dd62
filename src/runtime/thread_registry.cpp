#include "runtime/thread_registry.h"

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "runtime/errno_guard.h"
#include "runtime/thread_state.h"
#include "runtime/trace_writer.h"

namespace lockscope::runtime {
namespace {

// The kernel's word on whether a thread of this process still exists.
bool thread_is_gone(uint32_t pid, uint32_t tid) {
  const ErrnoGuard keep_errno;
  return syscall(SYS_tgkill, pid, tid, 0) != 0 && errno == ESRCH;
}

// Zeroes everything of a slot but its site table (empty, or reset by the caller) and identity.
void clear_slot(ThreadState& thread) {
  std::memset(static_cast<void*>(&thread), 0, offsetof(ThreadState, sites));
  std::memset(static_cast<void*>(&thread.epoch), 0,
              offsetof(ThreadState, state) - offsetof(ThreadState, epoch));
  thread.facts = ThreadFacts{};
}

}  // namespace

format::ThreadRecord thread_record_of(const ThreadState& t) {
  format::ThreadRecord record{};
  record.tid = t.tid;
  record.flags = t.flags;
  std::memcpy(record.name, t.name, sizeof(record.name));
  record.name[15] = '\0';
  record.acquisitions = t.acquisitions;
  record.releases = t.releases;
  record.contended = t.contended;
  record.failed = t.failed;
  record.wait_sum_ns = t.wait_sum_ns;
  record.wait_max_ns = t.wait_max_ns;
  std::memcpy(record.wait_ns_by_primitive, t.wait_ns_by_primitive,
              sizeof(record.wait_ns_by_primitive));
  record.barrier_last_arrivals = t.barrier_last_arrivals;
  return record;
}

ThreadState* ThreadRegistry::claim(SiteTable& merged, uint64_t& dropped,
                                   const ProcessOfThreads& process) {
  take_late_exits();
  if (free_.size() == 0 && exiting_.size() > 0) reclaim_gone(merged, dropped, process);
  ThreadState* thread = nullptr;
  if (free_.size() > 0) {
    thread = &slots_[free_.pop()];
  } else {
    const size_t index = slots_.size();
    thread = slots_.append([&](ThreadState& fresh) { fresh.index = static_cast<uint32_t>(index); });
    if (!thread) return nullptr;
  }
  clear_slot(*thread);
  thread->wide_entries = 0;
  thread->epoch = 1;
  thread->state.store(static_cast<uint32_t>(SlotState::kLive), std::memory_order_release);
  return thread;
}

void ThreadRegistry::mark_exiting_later(ThreadState& thread) {
  __atomic_fetch_or(&thread.flags, format::kThreadExited, __ATOMIC_RELAXED);
  uint32_t head = late_exits_.load(std::memory_order_relaxed);
  do {
    thread.late_exit_next = head;
  } while (!late_exits_.compare_exchange_weak(head, thread.index + 1, std::memory_order_release,
                                              std::memory_order_relaxed));
}

void ThreadRegistry::take_late_exits() {
  for (uint32_t next = late_exits_.exchange(0, std::memory_order_acquire); next != 0;) {
    ThreadState& thread = slots_[next - 1];
    next = thread.late_exit_next;
    mark_exiting(thread);
  }
}

void ThreadRegistry::mark_exiting(ThreadState& thread) {
  thread.flags |= format::kThreadExited;
  if (exiting_.push(thread.index))
    thread.state.store(static_cast<uint32_t>(SlotState::kExiting), std::memory_order_release);
  // else: out of memory; the slot stays live (its numbers are still written), never reused
}

void ThreadRegistry::reclaim_gone(SiteTable& merged, uint64_t& dropped,
                                  const ProcessOfThreads& process) {
  for (size_t i = exiting_.size(); i-- > 0;) {
    ThreadState& thread = slots_[exiting_[i]];
    if (!thread_is_gone(process.pid, thread.tid)) continue;
    fold(thread, merged, dropped, process);
    close_trace(thread.trace);
    thread.sites.clear_for_reuse();
    exiting_.remove_at(i);
    thread.state.store(static_cast<uint32_t>(SlotState::kFree), std::memory_order_release);
    free_.push(thread.index);  // out of memory: the slot is simply not reused
  }
}

uint64_t merge_thread_sites(SiteTable& into, const ThreadState& thread) {
  const uint32_t depth = thread.held_depth < kMaxHeldLocks ? thread.held_depth : kMaxHeldLocks;
  const SiteStats* held_samples[kMaxHeldLocks] = {};
  size_t held_sample_count = 0;
  for (uint32_t i = 0; i < depth; ++i) {
    const HeldLock& held = thread.held[i];
    if (held.weight > 1 && held.entry && held.epoch == own_epoch(thread))
      held_samples[held_sample_count++] = held.entry;
  }
  const uint64_t dropped = into.merge_from(thread.sites, held_samples, held_sample_count);
  for (uint32_t i = 0; i < depth; ++i) {
    const HeldLock& held = thread.held[i];
    // Stood for by the latest sample, but not ended: not a hold yet.
    if (held.weight == 0 && held.entry && held.epoch == own_epoch(thread))
      into.take_unended_hold(thread.sites, *held.entry);
  }
  return dropped;
}

void ThreadRegistry::fold(ThreadState& thread, SiteTable& merged, uint64_t& dropped,
                          const ProcessOfThreads& process) {
  // (A thread gone while it held a sample: pthread_exit with a lock held, an owner that died.)
  dropped += merge_thread_sites(merged, thread);
  format::ThreadRecord record = thread_record_of(thread);
  record.wait_histogram.first = static_cast<uint32_t>(finished_bins_.size());
  for (int b = 0; b < LogHistogramLayout::kBuckets; ++b) {
    if (!thread.wait_histogram[b]) continue;
    const format::HistogramBin bin{static_cast<uint32_t>(b), 0, thread.wait_histogram[b]};
    if (!finished_bins_.append([&](format::HistogramBin& into) { into = bin; })) break;
    ++record.wait_histogram.count;
  }
  const format::ThreadFactsRecord facts = process.facts_of(thread);
  if (!finished_.append([&](FinishedThread& into) { into = FinishedThread{record, facts}; }))
    dropped += thread.acquisitions + thread.releases;
}

void ThreadRegistry::reset_after_fork(ThreadState* keep) {
  free_.clear();
  exiting_.clear();
  late_exits_.store(0, std::memory_order_relaxed);
  for (size_t i = slots_.size(); i-- > 0;) {
    ThreadState& thread = slots_[i];
    if (&thread == keep) continue;
    // Another thread may have been changing its table at the fork: forget it, never touch it.
    thread.sites.abandon();
    thread.wide_cache = nullptr;  // likewise (left mapped)
    thread.wide_entries = 0;
    clear_slot(thread);
    thread.state.store(static_cast<uint32_t>(SlotState::kFree), std::memory_order_relaxed);
    free_.push(static_cast<uint32_t>(i));
  }
  finished_.reset();
  finished_bins_.reset();
}

}  // namespace lockscope::runtime
