#include "runtime/profile_thread_snapshot.h"

#include "runtime/recorder.h"
#include "runtime/runtime_state.h"
#include "runtime/thread_facts.h"
#include "runtime/thread_lifecycle.h"

namespace lockscope::runtime {
namespace {

uint64_t calls_in(const SiteTable& table) {
  uint64_t calls = 0;
  for (size_t i = 0; i < table.used(); ++i) calls += table.inserted(i).count;
  return calls;
}

// The wait a thread is blocked in, and the timed holds it has, counted up to `now` into `all` and
// its record (so that the profile of a server stopped with threads in a wait shows them waiting).
void add_in_progress(Runtime& rt, const ThreadState& t, SiteTable& all, LiveThread& live,
                     uint64_t now, uint64_t (&counters)[format::kCounterSlots]) {
  // The lock first (BlockedScope stores it last): the rest is then the same call's.
  const void* const blocked_lock = __atomic_load_n(&t.blocked.lock, __ATOMIC_ACQUIRE);
  BlockedCall blocked = t.blocked;
  blocked.lock = blocked_lock;
  if (blocked.lock && blocked.since_ticks < now) {
    const uint32_t slot = rt.locks.find_or_insert(reinterpret_cast<uintptr_t>(blocked.lock));
    const uint64_t ns = rt.clock.to_ns(now - blocked.since_ticks);
    const auto op = static_cast<format::Operation>(blocked.operation);
    SiteStats* entry =
        slot == LockTable::kNoSlot
            ? nullptr
            : all.find_or_insert(
                  SiteKey{slot, rt.locks.slot(slot).generation.load(std::memory_order_relaxed),
                          blocked.site, blocked.operation});
    if (SiteDetail* detail = entry ? all.detail(*entry) : nullptr) {
      // Counted as a wait that timed out is: a call that did not complete (failed), its time
      // waited up to now. (Counted contended, it was an acquisition in ACQUIRED, calls less
      // failures: a mutex never acquired showed acquired once.)
      ++entry->count;
      ++detail->failed;
      all.record_duration(ns, 1, detail->wait_sum_ns, detail->wait_max_ns, detail->wait_histogram);
      const format::Primitive primitive = format::operation_primitive(op);
      live.record.wait_ns_by_primitive[static_cast<uint32_t>(primitive)] += ns;
      // Counted as its site counts it: the thread's totals agree.
      ++live.record.failed;
      if (is_lock_wait(primitive)) {
        live.record.wait_sum_ns += ns;
        if (ns > live.record.wait_max_ns) live.record.wait_max_ns = ns;
        live.extra_wait_bucket = LogHistogramLayout::bucket_of(ns);
      }
      ++counters[static_cast<int>(format::Counter::kWaitsInProgress)];
    }
  }
  const uint32_t depth = t.held_depth < kMaxHeldLocks ? t.held_depth : kMaxHeldLocks;
  for (uint32_t i = 0; i < depth; ++i) {
    const HeldLock held = t.held[i];
    // A condition wait's mutex is not held while it waits (another thread may take it): not a
    // lock held at exit, and its hold so far is what was paused.
    const bool let_go_by_wait = blocked.lock && held.lock == blocked.released;
    if (!let_go_by_wait) ++counters[static_cast<int>(format::Counter::kHoldsInProgress)];
    const bool timed = held.weight != 0 || (held.stamped && hold_made_wait(held));
    // A thread that could not be paused may have begun it after `now`: not a hold yet.
    if (!timed || held.entry == nullptr || held.epoch != own_epoch(t) || held.start_ticks > now)
      continue;
    // A re-lock inside an outer hold of the same lock (further down the stack) adds no time.
    bool nested = false;
    for (uint32_t k = 0; k < i; ++k) nested = nested || t.held[k].lock == held.lock;
    const uint64_t ticks = nested           ? 0
                           : let_go_by_wait ? held.paused_ticks
                                            : now - held.start_ticks + held.paused_ticks;
    SiteStats* entry = all.find_or_insert(held.entry->key);
    if (SiteDetail* detail = entry ? all.detail(*entry) : nullptr) {
      all.record_hold(*detail, rt.clock.to_ns(ticks), 1);
    }
  }
}

}  // namespace

bool records_now(const ThreadState& t) {
  const auto state = static_cast<SlotState>(t.state.load(std::memory_order_acquire));
  return (state == SlotState::kLive || state == SlotState::kExiting) && t.tid != 0;
}

// One pass over the slots, under the merge lock: each thread's sites, totals and in-progress calls
// are read together, so that a profile's thread totals and site totals agree.
uint64_t snapshot_threads(Runtime& rt, SiteTable& all, ByteBuffer& live,
                          uint64_t (&counters)[format::kCounterSlots]) {
  uint64_t dropped = 0;
  const uint64_t now = rt.clock.now();
  for (size_t i = 0; i < rt.threads.slot_count(); ++i) {
    ThreadState& t = rt.threads.slot(i);
    if (!records_now(t)) continue;
    if (!(t.flags & format::kThreadExited)) read_thread_name(t.tid, t.name);
    LiveThread thread{thread_record_of(t), thread_facts_record(rt, t), calls_in(t.sites),
                      static_cast<uint32_t>(i), -1};
    dropped += merge_thread_sites(all, t);  // a sample in progress counts as itself alone
    add_in_progress(rt, t, all, thread, now, counters);
    live.append_record(thread);
  }
  return dropped;
}

uint64_t calls_since_snapshot(Runtime& rt, ByteBuffer& live) {
  uint64_t calls = 0;
  const auto* threads = reinterpret_cast<const LiveThread*>(live.data());
  for (size_t i = 0; i < live.size() / sizeof(LiveThread); ++i) {
    const ThreadState& t = rt.threads.slot(threads[i].slot);
    if (records_now(t)) calls += calls_in(t.sites) - threads[i].calls_at_snapshot;
  }
  return calls;
}

uint32_t threads_active_since_paused(Runtime& rt) {
  uint32_t active = 0;
  for (size_t i = 0; i < rt.threads.slot_count(); ++i) {
    const ThreadState& t = rt.threads.slot(i);
    if (records_now(t) && calls_made(t) != t.calls_when_paused) ++active;
  }
  return active;
}

}  // namespace lockscope::runtime
