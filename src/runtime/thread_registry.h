// Every thread's recording slot, over the process's whole life: slots are claimed at a thread's
// first call and reused once that thread is gone, so 100,000 short-lived threads cost the memory
// of the few that ran at once.
//
// A slot stays its thread's until the kernel says the thread no longer exists: glibc runs
// pthread_key destructors in rounds, in key order, and a signal may arrive until the very end, so
// a lock can be taken after our own key's destructor ran (OpenSSL's thread-exit lock, jemalloc's
// tcache teardown). Those late calls are recorded into the thread's own slot like any other. The
// destructor only marks the slot exiting; a later claim, finding no free slot, asks the kernel
// (tgkill with signal 0) which exiting threads are gone, folds their sites into the process table
// and their totals into a compact finished-thread record, and reuses the slot. A tid the kernel
// reused keeps an old slot alive a little longer; it never frees a slot still in use.
//
// All of it runs under the runtime's merge lock, from code that has marked itself inside
// lockscope (so a signal handler's locks pass through instead of re-entering).
#pragma once

#include <cstdint>

#include "common/profile_format.h"
#include "runtime/chunked_array.h"
#include "runtime/site_table.h"

namespace lockscope::runtime {

struct ThreadState;

// A stack of slot numbers over stable storage.
class IndexStack {
 public:
  bool push(uint32_t value) {
    uint32_t* at = storage_.slot(size_);
    if (!at) return false;
    *at = value;
    ++size_;
    return true;
  }
  uint32_t pop() { return storage_[--size_]; }
  uint32_t& operator[](size_t i) { return storage_[i]; }
  size_t size() const { return size_; }
  void remove_at(size_t i) { storage_[i] = storage_[--size_]; }
  void clear() { size_ = 0; }

 private:
  ChunkedArray<uint32_t, 8> storage_;
  size_t size_ = 0;
};

enum class SlotState : uint32_t { kUnused = 0, kLive = 1, kExiting = 2, kFree = 3 };

// What folding a gone thread needs of the process, which the runtime (the layer above, whose
// Runtime holds the registry) passes in.
struct ProcessOfThreads {
  uint32_t pid;  // whose threads the kernel is asked about (tgkill)
  // The thread's lifetime, CPU time and policy (thread_facts_record, on the process's clock).
  format::ThreadFactsRecord (*facts_of)(const ThreadState& thread);
};

class ThreadRegistry {
 public:
  // A zeroed slot for a new thread, its state live; nullptr when out of memory. Exiting threads
  // found gone are folded into `merged`; calls that could not be kept are added to `dropped`.
  // The slot's wide site cache (kept across a clear) is the caller's to give back, before the
  // thread uses the slot (wide_site_cache.h, a layer above).
  ThreadState* claim(SiteTable& merged, uint64_t& dropped, const ProcessOfThreads& process);
  // The thread passed its exit destructor; it may still record until it is gone.
  void mark_exiting(ThreadState& thread);
  // The same without the merge lock, for a thread that could not get it in time (a writer holds
  // it while it stalls: in the program's own open(), on a slow filesystem): flagged exited at once,
  // marked exiting by the lock's next holder (take_late_exits), so the slot is still reused.
  void mark_exiting_later(ThreadState& thread);
  // Under the merge lock: marks exiting the threads that mark_exiting_later noted.
  void take_late_exits();
  // After fork(), in the child: every slot but `keep` (the forking thread) is free, and the
  // finished records belong to the parent.
  void reset_after_fork(ThreadState* keep);

  size_t slot_count() const { return slots_.size(); }
  ThreadState& slot(size_t i) const { return slots_[i]; }
  size_t finished_count() const { return finished_.size(); }
  const format::ThreadRecord& finished(size_t i) const { return finished_[i].record; }
  // Its lifetime, CPU time and policy (its `thread` index is the writer's to set).
  const format::ThreadFactsRecord& finished_facts(size_t i) const { return finished_[i].facts; }
  // The bins of finished records: their wait_histogram refers to these.
  const format::HistogramBin& finished_bin(size_t i) const { return finished_bins_[i]; }

 private:
  void reclaim_gone(SiteTable& merged, uint64_t& dropped, const ProcessOfThreads& process);
  void fold(ThreadState& thread, SiteTable& merged, uint64_t& dropped,
            const ProcessOfThreads& process);

  ChunkedArray<ThreadState, 4, false> slots_;
  IndexStack free_;
  IndexStack exiting_;
  std::atomic<uint32_t> late_exits_{0};  // the latest noted slot's index + 1, 0: none
  // A gone thread's row and its facts, together: one is never kept without the other.
  struct FinishedThread {
    format::ThreadRecord record;
    format::ThreadFactsRecord facts;
  };
  ChunkedArray<FinishedThread, 8> finished_;
  ChunkedArray<format::HistogramBin, 10> finished_bins_;
};

// The thread's row of the profile, but for its wait histogram (the caller stores the bins).
format::ThreadRecord thread_record_of(const ThreadState& thread);
// `thread`'s sites merged into `into` (SiteTable::merge_from), the samples it still holds named,
// so that the acquisitions their sites' countdowns wait for stay theirs (a sample counts only
// once released), and each hold it holds that the latest sample stood for taken out of that
// sample's bucket (SiteTable::take_unended_hold). Returns the calls that could not be kept.
uint64_t merge_thread_sites(SiteTable& into, const ThreadState& thread);

}  // namespace lockscope::runtime
