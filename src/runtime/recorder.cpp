#include "runtime/recorder.h"

#include <sched.h>

#include "runtime/errno_guard.h"
#include "runtime/stack_budget.h"
#include "runtime/stack_capture.h"
#include "runtime/wide_site_cache.h"

namespace lockscope::runtime {
namespace {

// The stats entry of (lock generation, site, operation) in the thread's table, remembered in the
// thread's site cache for the inline fast path.
SiteStats* site_entry(ThreadState& self, const void* lock, uint32_t slot, uint32_t generation,
                      uintptr_t site, format::Operation op, uint32_t identity_epoch,
                      bool fill_wide) {
  const SiteKey key{slot, generation, site, static_cast<uint16_t>(op)};
  const size_t entries_before = self.sites.used();
  uint32_t number = 0;
  SiteStats* entry = self.sites.find_or_insert_via_lock(key, number);
  if (__builtin_expect(entry == nullptr, 0)) {  // the kernel refused memory
    runtime().count(format::Counter::kDroppedSites);
    return nullptr;
  }
  LockSlot& lock_slot = runtime().locks.slot(slot);
  const bool robust = lock_slot.flags.load(std::memory_order_relaxed) & format::kLockRobust;
  // Before waited_on: a first wait in between makes the entry look again.
  const uint32_t waited_epoch = runtime().waited_epoch.load(std::memory_order_acquire);
  const SiteCacheEntry cached{lock,
                              &lock_slot,
                              entry,
                              slot,
                              cache_epoch(self),
                              site,
                              identity_epoch,
                              static_cast<uint16_t>(op),
                              robust,
                              lock_slot.waited_on.load(std::memory_order_relaxed),
                              waited_epoch,
                              number};
  if (!cache_windows_open(self)) {
    site_cache_slot(self, lock, site, op) = cached;
    if (fill_wide) {
      // A release entry is counted when it first goes in (it was made without), and again when
      // it goes in again after a new epoch emptied the cache: never past the table's size.
      if ((self.sites.used() != entries_before ||
           format::operation_class(op) == format::OperationClass::kRelease) &&
          self.wide_entries < self.sites.used())
        ++self.wide_entries;
      wide_cache_fill(self.wide_cache, cached, self.wide_entries);
    }
  }
  return entry;
}

// The wide site cache's entry for (lock, site, op) under the current cache epoch (trace mode's
// tagged ones too), copied into the inline cache; nullptr when it has none.
SiteCacheEntry* wide_site_for_slow_path(ThreadState& self, const void* lock, format::Operation op,
                                        uintptr_t site) {
  SiteCacheEntry* wide =
      wide_cache_find(self.wide_cache, lock, site, static_cast<uint16_t>(op), cache_epoch(self));
  if (wide == nullptr) return nullptr;
  __builtin_prefetch(wide->stats, 1);  // both misses at once: the caller counts in the one and
  __builtin_prefetch(wide->slot, 1);   // reads the other
  // Waited on since it was filled: its holds are stamped before the trylock from now on.
  if (wide->waited_epoch != runtime().waited_epoch.load(std::memory_order_relaxed))
    refresh_stamp_early(*wide);
  if (!cache_windows_open(self)) site_cache_slot(self, lock, site, op) = *wide;
  return wide;
}

}  // namespace

LocatedSite locate_site(ThreadState& self, const void* lock, format::Operation op, uintptr_t site,
                        bool fill_wide) {
  InsideLockscope inside;  // the tables below must not be re-entered by a signal handler
  if (const SiteCacheEntry* wide = wide_site_for_slow_path(self, lock, op, site))
    return {wide->slot, wide->slot_index, wide->stats};
  Runtime& rt = runtime();
  const uint32_t slot_index = rt.locks.find_or_insert(reinterpret_cast<uintptr_t>(lock));
  if (slot_index == LockTable::kNoSlot) {
    rt.count(format::Counter::kDroppedLocks);
    return {};
  }
  self.sites.prefetch_chain(slot_index);  // independent of the slot: both misses at once
  // Read before the generation: a cache entry may then be stale but never wrongly valid.
  const uint32_t identity_epoch = rt.identity_epoch.load(std::memory_order_acquire);
  LockSlot& slot = rt.locks.slot(slot_index);
  const format::OperationClass op_class = format::operation_class(op);
  if (!slot.used.load(std::memory_order_relaxed) && op_class != format::OperationClass::kRelease)
    slot.used.store(true, std::memory_order_relaxed);
  // Once per lock generation: the site of its first acquire or wait names a lock that no init
  // named (an init's site, stored first, wins; an init after use starts a new generation). Not a
  // signal's or a post's: a condvar notified before anyone waits was not "first waited on" there.
  if ((op_class == format::OperationClass::kAcquire || op_class == format::OperationClass::kWait) &&
      slot.init_site.load(std::memory_order_relaxed) == 0) {
    uintptr_t none = 0;
    if (slot.init_site.compare_exchange_strong(none, site, std::memory_order_relaxed))
      slot.flags.fetch_or(format::kLockFirstUseSite, std::memory_order_relaxed);
  }
  // A plain unlock does not name the kind: it is also an rwlock's whose side was not seen taken
  // (the writer calls a lock that nothing else names a mutex).
  if (slot.primitive.load(std::memory_order_relaxed) == 0 && op != format::Operation::kUnlock)
    slot.primitive.store(static_cast<uint32_t>(format::operation_primitive(op)),
                         std::memory_order_relaxed);
  const uint32_t generation = slot.generation.load(std::memory_order_relaxed);
  return {&slot, slot_index,
          site_entry(self, lock, slot_index, generation, site, op, identity_epoch, fill_wide)};
}

uint32_t capture_stack_at(ThreadState& self, uintptr_t site, uintptr_t* frames, uint32_t max_depth,
                          uint8_t unwind_mode, uint64_t& now, uint64_t& spent,
                          std::atomic<uint64_t>* shared) {
  Runtime& rt = g_runtime;
  const uint64_t start = now;
  if (!stack_budget_allows(self, start, spent, shared)) return 0;
  const uint64_t spent_before = spent;
  InsideLockscope inside;       // libgcc's unwinder may lock a mutex of its own
  const ErrnoGuard keep_errno;  // the unwinders' reads of memory and files may fail
  uintptr_t raw[kMaxStackDepth + 8];
  // max_depth <= kMaxStackDepth: room for it and up to 8 frames of our own.
  uint32_t got = capture_stack(raw, max_depth + 8, static_cast<UnwindMode>(unwind_mode));
  now = rt.clock.now();
  spent += StackBudget::charge(now - start, rt.clock.ticks_per_second);
  // Our own frames come first (this function's, acquire_slow's): the program's starts at `site`.
  uint32_t first = 0;
  while (first < got && first < 8 && raw[first] != site) ++first;
  if ((first >= got || raw[first] != site) &&
      static_cast<UnwindMode>(unwind_mode) == UnwindMode::kAuto) {
    // The frame-pointer walk went past `site` without a break: a frame of ours without a frame
    // pointer between (a slow path called, not tail-called, from its interposer). DWARF sees it.
    const uint64_t retry_start = now;
    got = capture_stack(raw, max_depth + 8, UnwindMode::kDwarf);
    now = rt.clock.now();
    spent += StackBudget::charge(now - retry_start, rt.clock.ticks_per_second);
    for (first = 0; first < got && first < 8 && raw[first] != site;) ++first;
  }
  if (shared) shared->fetch_add(spent - spent_before, std::memory_order_relaxed);
  if (first >= got || raw[first] != site) return 0;
  uint32_t depth = got - first;
  if (depth > max_depth) depth = max_depth;
  for (uint32_t i = 0; i < depth; ++i) frames[i] = raw[first + i];
  return depth;
}

void note_robust(const void* lock) {
  InsideLockscope inside;
  Runtime& rt = runtime();
  const ErrnoGuard keep_errno;  // the lock table's insertion may mmap or futex-wait
  const uint32_t number = rt.locks.find_or_insert(reinterpret_cast<uintptr_t>(lock));
  if (number == LockTable::kNoSlot) return;
  LockSlot& slot = rt.locks.slot(number);
  if (slot.flags.load(std::memory_order_relaxed) & format::kLockRobust) return;
  // First seen robust: site cache entries filled before say otherwise. Drop them all (once per
  // robust mutex, as an init does).
  if (!(slot.flags.fetch_or(format::kLockRobust, std::memory_order_relaxed) & format::kLockRobust))
    rt.identity_epoch.fetch_add(1, std::memory_order_release);
}

void snapshot_if_due(ThreadState& self) {
  Runtime& rt = g_runtime;
  if (rt.snapshot_interval_ticks == 0) return;
  const uint64_t now = rt.clock.now();
  uint64_t due = rt.next_snapshot_ticks.load(std::memory_order_relaxed);
  // Only a thread that holds none of the program's locks writes: it then takes part in no cycle.
  if (now < due || self.held_depth != 0) return;
  // Taken: none is due until this one is written (the threads it pauses would otherwise find the
  // next one due as soon as they resume, and write it at once).
  if (!rt.next_snapshot_ticks.compare_exchange_strong(due, UINT64_MAX, std::memory_order_relaxed))
    return;  // another thread took this one
  // Written by the writer lifecycle.cpp registered (Runtime::write_snapshot), on this thread.
  rt.write_snapshot();
  // A snapshot costs about a profile write, the program's threads paused meanwhile (a server's:
  // ~90 ms): the next comes after the interval, and at least nine times the write's length after
  // it, so that snapshots take at most a tenth of the run whatever the interval asked for
  // (memcached at 0.1 s lost 44 % of its throughput without this).
  const uint64_t end = rt.clock.now();
  const uint64_t spaced = end + 9 * (end - now);
  const uint64_t next = now + rt.snapshot_interval_ticks;
  rt.next_snapshot_ticks.store(next > spaced ? next : spaced, std::memory_order_relaxed);
}

void count_owner_change_slow(ThreadState& self, SiteStats* stats) {
  bool counted = false;
  if (stats) {  // its count wrapped to 0; the arena may map memory: keep the program's errno
    const ErrnoGuard keep_errno;
    InsideLockscope inside;
    counted = self.sites.carry_owner_changes(*stats);
  }
  if (!counted) runtime().count(format::Counter::kDroppedSites);
}

void record_owner_change(LockSlot& slot, ThreadState& self, SiteStats* stats, uintptr_t site) {
  // Plain loads and stores: the caller holds the lock, which orders every update (note_owner).
  const uint32_t tid = self.tid;
  const uint32_t previous_owner = slot.last_owner.load(std::memory_order_relaxed);
  // The same owner at another site: a recursive mutex re-taken inside its outer hold (this
  // acquisition is not on the held stack yet) goes on being that hold, whose site stays.
  if (previous_owner == tid)
    for (uint32_t i = 0; i < self.held_depth; ++i)
      if (self.held[i].lock_slot == &slot) return;
  holder_site(slot).store(site, std::memory_order_relaxed);
  if (previous_owner == tid) return;
  slot.last_owner.store(tid, std::memory_order_relaxed);
  if (previous_owner != 0) count_owner_change(self, stats);
}

void record_thread_wait(ThreadState& self, format::Primitive primitive, uint64_t wait_ns) {
  self.wait_ns_by_primitive[static_cast<uint32_t>(primitive)] += wait_ns;
  if (is_lock_wait(primitive))
    record_duration(wait_ns, 1, self.wait_sum_ns, self.wait_max_ns, self.wait_histogram);
}

Recorded record_acquire(ThreadState& self, const void* lock, format::Operation op, uintptr_t site,
                        const AcquireOutcome& outcome) {
  InsideLockscope inside;
  const LocatedSite located = locate_site(self, lock, op, site);
  const Recorded recorded{located.slot, op};
  SiteStats* entry = located.stats;
  const bool failed = !acquired(outcome.result);
  // Unrecorded (no memory for its entry or detail), it still takes the lock over: an owner word
  // needs neither, and the next owner change is then counted from the right owner.
  const auto unrecorded = [&] {
    if (outcome.owner_word && !failed && !format::is_read_side(op))
      note_owner_in_word(outcome.owner_word, self, nullptr);
    return recorded;
  };
  if (!entry) return unrecorded();
  const format::Primitive primitive = format::operation_primitive(op);
  ++entry->count;
  SiteDetail* detail = nullptr;
  if ((outcome.contended || failed || outcome.stack_depth != 0) &&
      !(detail = self.sites.detail(*entry))) {
    runtime().count(format::Counter::kDroppedSites);
    return unrecorded();
  }
  // The stack this acquisition was made from, as a number of the thread's store (0: none).
  uint32_t own_stack = 0;
  // --stacks all: every lock acquisition by its stack (contended ones too).
  if (g_runtime.all_stacks && outcome.stack_depth != 0 && !failed &&
      format::operation_class(op) == format::OperationClass::kAcquire &&
      !(own_stack = self.sites.record_stack(detail->acquire_stacks, outcome.stack,
                                            outcome.stack_depth, 1, 0)))
    runtime().count(format::Counter::kDroppedSites);
  // What the release that left this thread waiting wrote into the lock's slot (see
  // note_blocking_release), taken (0 again) inside the critical section now, so ordered after that
  // write: trusted when that release was the last owner's (a value left by a release whose waiter
  // timed out, or none written, as by a condition wait's unlock inside glibc, is not this
  // handoff's). Readers do not exclude each other: not taken for the read side.
  uint64_t releaser = 0;
  uint32_t holder_stack_number = 0;
  // The owner it took the lock from (before note_owner below notes this thread).
  const uint32_t previous = outcome.contended && located.slot
                                ? previous_owner(*located.slot, outcome.owner_word, self)
                                : 0;
  if (outcome.contended && !failed && located.slot &&
      format::operation_class(op) == format::OperationClass::kAcquire &&
      !format::is_read_side(op)) {
    const uint64_t from = releaser_cpu(*located.slot).exchange(0, std::memory_order_relaxed);
    const uint32_t stack = holder_stack(*located.slot).exchange(0, std::memory_order_relaxed);
    if (from != 0 && releaser_tid(from) == previous) {
      releaser = from;
      holder_stack_number = stack;
    }
  }
  // A wait that ended in a timeout or a cancellation is still time spent waiting; an immediate
  // error (EDEADLK from an error-checking mutex its owner relocks) is not.
  if (outcome.contended && (!failed || failed_after_waiting(outcome.result))) {
    self.sites.record_duration(outcome.wait_ns, 1, detail->wait_sum_ns, detail->wait_max_ns,
                               detail->wait_histogram);
    record_thread_wait(self, primitive, outcome.wait_ns);
    uint32_t waiter_stack = 0;
    if (outcome.stack_depth &&
        !(waiter_stack = self.sites.record_stack(detail->stacks, outcome.stack, outcome.stack_depth,
                                                 1, outcome.wait_ns)))
      runtime().count(format::Counter::kDroppedSites);
    if (waiter_stack) own_stack = waiter_stack;
    if (outcome.blocker == Blocker::kReaders) ++detail->behind_readers;
    if (outcome.blocker == Blocker::kWriter) ++detail->behind_writer;
    // Who it waited behind: the holder that released the lock to this thread, whose site the
    // lock's slot names (written in its critical section, so ordered by the lock), with its stack
    // (above) and this wait's; readers have no one site.
    if (!failed && located.slot && outcome.blocker != Blocker::kReaders &&
        format::operation_class(op) == format::OperationClass::kAcquire &&
        !self.sites.record_blame(*detail,
                                 BlameKey{blamed_holder_site(*located.slot, outcome.owner_word,
                                                             previous, outcome.start_ticks),
                                          holder_stack_number, waiter_stack},
                                 1, outcome.wait_ns))
      runtime().count(format::Counter::kDroppedSites);
  }
  if (failed) {
    ++detail->failed;
    ++self.failed;
    return recorded;
  }
  if (outcome.contended) {
    ++detail->contended;
    // Where the lock came from: the CPU of that release, against this thread's now.
    const int cpu = releaser != 0 ? sched_getcpu() : -1;
    if (cpu >= 0)
      ++(static_cast<uint32_t>(cpu) + 1 == releaser_cpu_plus_one(releaser) ? detail->same_cpu
                                                                           : detail->cross_cpu);
  }
  if (outcome.result == EOWNERDEAD && located.slot)  // the previous owner died holding it
    located.slot->flags.fetch_or(format::kLockOwnerDied, std::memory_order_relaxed);
  if (format::operation_class(op) != format::OperationClass::kAcquire)
    return recorded;  // nothing held
  ++self.acquisitions;
  if (outcome.contended) ++self.contended;
  const bool owner_changed =
      !format::is_read_side(op) && note_owner(*located.slot, outcome.owner_word, self, entry, site);
  if (self.held_depth >= kMaxHeldLocks) {
    runtime().count(format::Counter::kHeldStackOverflow);
    return {recorded.slot, op, 0, owner_changed};
  }
  HeldLock& held = self.held[self.held_depth++];
  held.lock = lock;
  held.lock_slot = located.slot;
  held.slot = located.slot_index;
  held.epoch = own_epoch(self);
  held.entry = entry;
  held.release_operation = static_cast<uint16_t>(release_operation_for(op));
  held.signalled_slot = 0;
  held.made_wait = false;
  if (outcome.contended) {
    held.start_ticks = outcome.end_ticks;
    held.paused_ticks = 0;
    held.stamped = true;
    held.weight = 1;
  } else if (entry->hold_countdown == 0) {
    start_sampled_hold(self, held, *entry);
  } else {
    --entry->hold_countdown;
    held.weight = 0;
    held.stamped = false;
    if (located.slot->waited_on.load(std::memory_order_relaxed)) stamp_hold(held);
  }
  // Its stack (a contended acquisition's, or any with --stacks all), for the waiters this hold
  // may make (note_blocking_release): only a stamped hold can be told apart from the next.
  if (own_stack != 0 && held.stamped)
    self.held_stacks[self.held_depth - 1] = HeldStack{held.start_ticks, own_stack, own_epoch(self)};
  return {recorded.slot, op, held.stamped ? held.start_ticks : 0, owner_changed};
}

Recorded record_release(ThreadState& self, const void* lock, uintptr_t site, int result,
                        format::Operation default_operation, bool made_wait, uint64_t end_ticks) {
  InsideLockscope inside;
  Runtime& rt = runtime();
  format::Operation op = default_operation;
  SiteStats* acquire_entry = nullptr;  // of the held lock released here, when known
  uint64_t timed_to = 0;               // the clock read that timed its hold
  bool elsewhere_before = false;       // its acquire site's locks were released elsewhere before
  if (result == 0) {
    // Usually the innermost held lock; search down for out-of-order unlocks.
    bool found = false;
    for (uint32_t i = self.held_depth; i-- > 0;) {
      if (self.held[i].lock != lock) continue;
      HeldLock held = take_held(self, i);
      if (held.epoch == own_epoch(self)) {
        acquire_entry = held.entry;
        elsewhere_before =
            acquire_entry->release_stats && acquire_entry->release_stats->key.site != site;
      }
      op = static_cast<format::Operation>(held.release_operation);
      if (held.weight != 0 || made_wait)
        timed_to = finish_timed_hold(self, held, made_wait, site, end_ticks);
      found = true;
      break;
    }
    if (!found) rt.count(format::Counter::kUnbalancedUnlocks);
    ++self.releases;
  }
  // (Trace mode finds every release through the caches: its holds have no release_stats.)
  const LocatedSite located =
      locate_site(self, lock, op, site, elsewhere_before || rt.trace.enabled);
  SiteStats* entry = located.stats;
  if (!entry) return {located.slot, op, timed_to};
  ++entry->count;
  // The next release of a lock taken there goes straight to `entry` (not in trace mode, where
  // every release goes to the sink).
  if (acquire_entry && !rt.trace.enabled) acquire_entry->release_stats = entry;
  snapshot_if_due(self);
  if (result != 0) {
    if (SiteDetail* detail = self.sites.detail(*entry))
      ++detail->failed;
    else
      rt.count(format::Counter::kDroppedSites);
  }
  return {located.slot, op, timed_to};
}

Recorded record_event(ThreadState& self, const void* lock, format::Operation op, uintptr_t site,
                      int waiters_seen) {
  InsideLockscope inside;
  const LocatedSite located = locate_site(self, lock, op, site);
  const Recorded recorded{located.slot, op};
  SiteStats* entry = located.stats;
  if (!entry) return recorded;
  ++entry->count;
  if (waiters_seen < 0) return recorded;
  SiteDetail* detail = self.sites.detail(*entry);
  if (!detail) {
    runtime().count(format::Counter::kDroppedSites);
    return recorded;
  }
  if (waiters_seen > 0) ++detail->with_waiters;
  if (waiters_seen == 0) ++detail->without_waiters;
  return recorded;
}

Recorded record_wait(ThreadState& self, const void* lock, format::Operation op, uintptr_t site,
                     const WaitOutcome& wait) {
  InsideLockscope inside;
  snapshot_if_due(self);
  const LocatedSite located = locate_site(self, lock, op, site);
  const Recorded recorded{located.slot, op};
  // A wait that failed (a condition wait that timed out) is one of the thread's failed calls, as
  // the sites' (the thread's FAILED left out condvar timeouts while its locks' added them up).
  if (wait.failed) ++self.failed;
  SiteStats* entry = located.stats;
  if (!entry) return recorded;
  ++entry->count;
  if (!wait.failed && !wait.arrived_last && !wait.waited) return recorded;
  SiteDetail* detail = self.sites.detail(*entry);
  if (!detail) {
    runtime().count(format::Counter::kDroppedSites);
    return recorded;
  }
  if (wait.failed) ++detail->failed;
  if (wait.arrived_last) {
    ++detail->arrived_last;
    ++self.barrier_last_arrivals;
  }
  if (wait.waited) {
    const uint64_t wait_ns = g_runtime.clock.to_ns(wait.end_ticks - wait.start_ticks);
    if (!wait.failed) ++detail->contended;
    self.sites.record_duration(wait_ns, 1, detail->wait_sum_ns, detail->wait_max_ns,
                               detail->wait_histogram);
    record_thread_wait(self, format::operation_primitive(op), wait_ns);
    // A mutex re-taken after a condition wait waited behind some hold: its site, or 0 when not
    // known (each such wait has a row, so that the rows add up to the site's waits, as an
    // acquisition's do).
    if ((wait.blame_site || op == format::Operation::kCondReacquire) &&
        !self.sites.record_blame(*detail, BlameKey{wait.blame_site, 0, 0}, 1, wait_ns))
      runtime().count(format::Counter::kDroppedSites);
  }
  return recorded;
}

namespace {
void no_mark(ThreadState&, format::TraceKind, const void*, format::Operation, uintptr_t, uint64_t,
             uint8_t) {}
void no_thread_event(ThreadState&, format::TraceKind) {}
}  // namespace

constinit const EventSink kSummarySink{record_acquire, record_release, record_event,
                                       record_wait,    no_mark,        no_thread_event};

}  // namespace lockscope::runtime
