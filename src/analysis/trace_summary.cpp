#include "analysis/trace_summary.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "analysis/hold_bounds.h"
#include "analysis/lock_kinds.h"

namespace lockscope {
namespace {

using format::OperationClass;
using format::TraceKind;

struct LockKey {
  uint64_t address;
  uint32_t generation;
  auto operator<=>(const LockKey&) const = default;
};

struct HeldHold {
  uint64_t object;
  uint32_t generation;
  SiteSummary* site;
  uint64_t start_ticks;
  uint64_t paused_ticks = 0;
  uint64_t paused_at = 0;  // while a condition wait has let go of it
};

void add_duration(uint64_t ns, uint64_t& sum, uint64_t& max, LatencyHistogram& histogram) {
  sum += ns;
  max = std::max(max, ns);
  histogram.add(LogHistogramLayout::bucket_of(ns), 1);
}

class Summarizer {
 public:
  explicit Summarizer(const ProcessProfile& process) : process_(process) {
    for (const LockSummary& lock : process.locks) known_[{lock.address, lock.generation}] = &lock;
  }

  void thread_events(const TraceThread& traced, const TraceRecord* first, const TraceRecord* end) {
    ThreadSummary thread;
    thread.tid = traced.tid;
    for (const ThreadSummary& known : process_.threads)
      if (known.tid == traced.tid) {
        thread.name = known.name;
        thread.flags = known.flags;
      }
    std::map<std::pair<uint64_t, uint16_t>, uint64_t> begun;  // (object, op) -> wait start
    std::vector<HeldHold> held;
    for (const TraceRecord* event = first; event != end; ++event) {
      switch (event->kind) {
        case TraceKind::kWaitBegin:
          begun[{event->object, static_cast<uint16_t>(event->operation)}] = event->ticks;
          break;
        case TraceKind::kCall:
          call(*event, thread, begun, held);
          break;
        case TraceKind::kHoldPause:
          for (HeldHold& hold : held)
            if (hold.object == event->object) hold.paused_at = event->ticks;
          break;
        case TraceKind::kHoldResume:
          for (HeldHold& hold : held)
            if (hold.object == event->object && hold.paused_at != 0) {
              hold.paused_ticks += event->ticks - hold.paused_at;
              hold.paused_at = 0;
              // The mutex re-taken inside the condition wait, from another owner.
              if (event->flags & format::kTraceOwnerChanged)
                ++owner_changes_[{hold.object, hold.generation}];
            }
          break;
        case TraceKind::kThreadName:
          thread.name = event->name;
          break;
        case TraceKind::kThreadExit:
          thread.flags |= format::kThreadExited;
          break;
        default:
          break;
      }
    }
    thread.waits_only = thread.wait;
    thread.wait.add(0, thread.acquisitions - std::min(thread.acquisitions, thread.contended));
    out_.threads.push_back(std::move(thread));
  }

  // `duration_ns`, `threads`: the process's run (to its last event at least) and threads, whose
  // physical bounds cap the holds as the profile reader caps the tables' (hold_bounds.h).
  TraceSummary finish(uint64_t duration_ns, size_t threads) {
    threads = std::max(threads, out_.threads.size());
    for (auto& [key, lock] : locks_) {
      lock.owner_changes = owner_changes_[key];
      for (auto& [site_key, site] : sites_[key]) {
        cap_site_holds(site, duration_ns, threads);
        lock.sites.push_back(site);
      }
      lock.finish();
      cap_lock_holds(lock, duration_ns, threads);
      out_.locks.push_back(std::move(lock));
    }
    return std::move(out_);
  }

 private:
  LockSummary& lock_of(const TraceRecord& event) {
    const LockKey key{event.object, event.generation};
    auto [it, added] = locks_.try_emplace(key);
    if (added) {
      LockSummary& lock = it->second;
      lock.address = key.address;
      lock.generation = key.generation;
      lock.primitive = format::operation_primitive(event.operation);
      if (auto known = known_.find(key); known != known_.end()) {
        lock.primitive = known->second->primitive;
        lock.kind = known->second->kind;
        lock.flags = known->second->flags;
        lock.capacity = known->second->capacity;
        lock.init_site = known->second->init_site;
        lock.first_use_site = known->second->first_use_site;
      }
    }
    return it->second;
  }

  SiteSummary& site_of(const TraceRecord& event) {
    lock_of(event);
    const LockKey key{event.object, event.generation};
    auto [it, added] =
        sites_[key].try_emplace({event.site, static_cast<uint16_t>(event.operation)});
    if (added) {
      it->second.operation = event.operation;
      it->second.location = process_.trace.sites[event.site];
      it->second.hold_samples = 0;
    }
    return it->second;
  }

  void call(const TraceRecord& event, ThreadSummary& thread,
            std::map<std::pair<uint64_t, uint16_t>, uint64_t>& begun, std::vector<HeldHold>& held) {
    SiteSummary& site = site_of(event);
    const ProcessTrace& trace = process_.trace;
    const format::Operation op = event.operation;
    const format::Primitive primitive = format::operation_primitive(op);
    const OperationClass kind = format::operation_class(op);
    const bool failed = event.flags & format::kTraceFailed;
    const bool waited = event.flags & format::kTraceWaited;
    ++site.count;
    uint64_t wait_ns = 0;
    bool wait_counts = false;  // time spent waiting (a timeout's too, not an immediate error)
    if (waited) {
      auto it = begun.find({event.object, static_cast<uint16_t>(op)});
      if (it != begun.end()) {
        wait_ns = trace.ticks_to_ns(event.ticks - it->second);
        begun.erase(it);
      }
      // Through the acquire path (locks, semaphores): timeouts and interruptions count; otherwise
      // any wait does.
      const bool acquire_path =
          kind == OperationClass::kAcquire || primitive == format::Primitive::kSemaphore;
      wait_counts = !failed || !acquire_path || (event.flags & format::kTraceTimedOut) ||
                    format::trace_interrupted(event.flags);
    }
    if (wait_counts) {
      add_duration(wait_ns, site.wait_sum_ns, site.wait_max_ns, site.wait);
      thread.wait_ns_by_primitive[static_cast<uint32_t>(primitive)] += wait_ns;
      if (is_lock_wait_primitive(primitive))
        add_duration(wait_ns, thread.wait_sum_ns, thread.wait_max_ns, thread.wait);
    }
    if (!format::trace_interrupted(event.flags)) {
      if (event.flags & format::kTraceWithWaiters) ++site.with_waiters;
      if (event.flags & format::kTraceNoWaiters) ++site.without_waiters;
    }
    if (event.flags & format::kTraceArrivedLast) {
      ++site.arrived_last;
      ++thread.barrier_last_arrivals;
    }
    if (failed) {
      ++site.failed;
      if (kind == OperationClass::kAcquire || kind == OperationClass::kWait) ++thread.failed;
      return;
    }
    if (waited) ++site.contended;
    if (kind == OperationClass::kAcquire) {
      ++thread.acquisitions;
      if (waited) ++thread.contended;
      held.push_back(HeldHold{event.object, event.generation, &site, event.ticks});
      if (event.flags & format::kTraceOwnerChanged)
        ++owner_changes_[{event.object, event.generation}];
    } else if (kind == OperationClass::kRelease) {
      ++thread.releases;
      for (size_t i = held.size(); i-- > 0;) {
        if (held[i].object != event.object) continue;
        SiteSummary& acquired_at = *held[i].site;
        // A re-lock inside an outer hold of the same lock adds no time, as the runtime counts it
        // (the outer hold covers it).
        bool nested = false;
        for (size_t k = 0; k < i; ++k) nested = nested || held[k].object == event.object;
        const uint64_t ticks =
            nested ? 0 : event.ticks - held[i].start_ticks - held[i].paused_ticks;
        add_duration(trace.ticks_to_ns(ticks), acquired_at.hold_sum_ns, acquired_at.hold_max_ns,
                     acquired_at.hold);
        ++acquired_at.hold_samples;
        held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
  }

  const ProcessProfile& process_;
  std::map<LockKey, const LockSummary*> known_;
  std::map<LockKey, LockSummary> locks_;
  std::map<LockKey, std::map<std::pair<size_t, uint16_t>, SiteSummary>> sites_;
  std::map<LockKey, uint64_t> owner_changes_;  // the runtime's own count, flagged on each event
  TraceSummary out_;
};

}  // namespace

TraceSummary summarize_trace(const ProcessProfile& process) {
  Summarizer summarizer(process);
  const std::vector<TraceRecord>& events = process.trace.events;
  // Events come in runs, one per thread file, each in its thread's order.
  for (size_t at = 0, end = 0; at < events.size(); at = end) {
    end = at;
    while (end < events.size() && events[end].tid == events[at].tid) ++end;
    TraceThread thread;
    thread.tid = events[at].tid;
    summarizer.thread_events(thread, events.data() + at, events.data() + end);
  }
  uint64_t duration_ns = process.duration_ns;
  for (const TraceRecord& event : events) duration_ns = std::max(duration_ns, event.time_ns);
  return summarizer.finish(duration_ns, process.threads.size());
}

void rebuild_from_trace(ProcessProfile& process) {
  TraceSummary rebuilt = summarize_trace(process);
  // What the trace does not carry, per site: kept from the snapshot.
  for (LockSummary& lock : rebuilt.locks)
    for (const LockSummary& old : process.locks) {
      if (old.address != lock.address || old.generation != lock.generation) continue;
      for (SiteSummary& site : lock.sites)
        for (const SiteSummary& before : old.sites)
          if (before.operation == site.operation &&
              before.location.module == site.location.module &&
              before.location.offset == site.location.offset) {
            site.blame = before.blame;
            site.stacks = before.stacks;
            site.hold_stacks = before.hold_stacks;
            site.acquire_stacks = before.acquire_stacks;
            site.cross_cpu_handoffs = before.cross_cpu_handoffs;
            site.same_cpu_handoffs = before.same_cpu_handoffs;
          }
      lock.finish();
    }
  // A lock the snapshot knew that the trace never used (init'ed only, say) stays as it was.
  std::map<LockKey, size_t> new_index;
  for (size_t i = 0; i < rebuilt.locks.size(); ++i)
    new_index[{rebuilt.locks[i].address, rebuilt.locks[i].generation}] = i;
  for (const LockSummary& old : process.locks)
    if (new_index.try_emplace({old.address, old.generation}, rebuilt.locks.size()).second)
      rebuilt.locks.push_back(old);
  // Lock-order edges name locks by index: into the new list now.
  for (LockOrderEdge& edge : process.lock_order) {
    const LockSummary& from = process.locks[edge.from_lock];
    const LockSummary& to = process.locks[edge.to_lock];
    edge.from_lock = new_index[{from.address, from.generation}];
    edge.to_lock = new_index[{to.address, to.generation}];
  }
  process.locks = std::move(rebuilt.locks);
  process.threads = std::move(rebuilt.threads);
  // The snapshot's duration is that of its start-up; the figures now go on to the last event, and
  // so did the run (shares of it, such as OF RUN, stay within it).
  for (const TraceRecord& event : process.trace.events)
    process.duration_ns = std::max(process.duration_ns, event.time_ns);
}

}  // namespace lockscope
