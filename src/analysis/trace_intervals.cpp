#include "analysis/trace_intervals.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "analysis/weighted_stacks.h"

namespace lockscope {
namespace {

using format::TraceKind;

struct OpenHold {
  size_t acquire;
  uint64_t object;
  uint64_t begin_ticks;
  uint64_t begin_ns;
  bool resumed = false;
  bool paused = false;  // a condition wait has let go of it
};

class IntervalBuilder {
 public:
  explicit IntervalBuilder(const ProcessTrace& trace) : trace_(trace) {}

  // One thread's run of events, [first, end) of trace.events.
  void thread_run(size_t first, size_t end) {
    std::map<std::pair<uint64_t, format::Operation>, size_t> begun;  // -> its kWaitBegin
    std::vector<OpenHold> held;
    for (size_t at = first; at < end; ++at) {
      const TraceRecord& event = trace_.events[at];
      switch (event.kind) {
        case TraceKind::kWaitBegin:
          begun[{event.object, event.operation}] = at;
          break;
        case TraceKind::kCall:
          call(at, begun, held);
          break;
        case TraceKind::kHoldPause:
          for (OpenHold& hold : held)
            if (hold.object == event.object && !hold.paused) {
              close(hold, at);
              hold.paused = true;
            }
          break;
        case TraceKind::kHoldResume:
          for (OpenHold& hold : held)
            if (hold.object == event.object && hold.paused) {
              hold = OpenHold{hold.acquire, hold.object, event.ticks, event.time_ns, true};
            }
          break;
        default:
          break;
      }
    }
    for (const OpenHold& hold : held)
      if (!hold.paused) close(hold, TraceHold::kNoEvent, end - 1);
  }

  TraceIntervals finish() {
    add_handoffs();
    return std::move(out_);
  }

 private:
  void call(size_t at, std::map<std::pair<uint64_t, format::Operation>, size_t>& begun,
            std::vector<OpenHold>& held) {
    const TraceRecord& event = trace_.events[at];
    if (event.flags & format::kTraceWaited) {
      auto it = begun.find({event.object, event.operation});
      if (it != begun.end()) {
        const TraceRecord& begin = trace_.events[it->second];
        out_.waits.push_back(TraceWait{at, begin.time_ns, event.time_ns,
                                       trace_.ticks_to_ns(event.ticks - begin.ticks)});
        begun.erase(it);
      }
    }
    if (event.flags & format::kTraceFailed) return;
    const format::OperationClass kind = format::operation_class(event.operation);
    if (kind == format::OperationClass::kAcquire) {
      held.push_back(OpenHold{at, event.object, event.ticks, event.time_ns});
    } else if (kind == format::OperationClass::kRelease) {
      for (size_t i = held.size(); i-- > 0;) {
        if (held[i].object != event.object || held[i].paused) continue;
        close(held[i], at);
        held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
  }

  // A piece of `hold` ending at event `end` (kNoEvent: open, to event `last`).
  void close(const OpenHold& hold, size_t end, size_t last = 0) {
    const TraceRecord& until = trace_.events[end == TraceHold::kNoEvent ? last : end];
    const uint64_t ticks = until.ticks > hold.begin_ticks ? until.ticks - hold.begin_ticks : 0;
    out_.holds.push_back(TraceHold{hold.acquire, end, hold.begin_ns,
                                   std::max(until.time_ns, hold.begin_ns),
                                   trace_.ticks_to_ns(ticks), hold.resumed});
  }

  void add_handoffs() {
    using LockKey = std::pair<uint64_t, uint32_t>;                       // address, generation
    std::map<LockKey, std::vector<std::pair<uint64_t, size_t>>> begins;  // (begin_ns, hold)
    for (size_t h = 0; h < out_.holds.size(); ++h) {
      const TraceHold& hold = out_.holds[h];
      if (hold.end == TraceHold::kNoEvent) continue;
      const TraceRecord& acquired = trace_.events[hold.acquire];
      begins[{acquired.object, acquired.generation}].emplace_back(hold.begin_ns, h);
    }
    for (auto& [key, list] : begins) std::sort(list.begin(), list.end());
    for (size_t w = 0; w < out_.waits.size(); ++w) {
      const TraceWait& wait = out_.waits[w];
      const TraceRecord& call = trace_.events[wait.call];
      if (!format::is_acquire(call.operation) || (call.flags & format::kTraceFailed)) continue;
      auto it = begins.find({call.object, call.generation});
      if (it == begins.end()) continue;
      const auto& list = it->second;
      // The latest hold begun before the acquisition, by another thread, still held when the
      // wait began; going back in time, a hold that ended before the wait began is the end.
      auto at = std::upper_bound(list.begin(), list.end(), std::make_pair(wait.end_ns, SIZE_MAX));
      while (at != list.begin()) {
        const TraceHold& hold = out_.holds[(--at)->second];
        if (hold.end_ns < wait.begin_ns) break;
        if (trace_.events[hold.acquire].tid == call.tid) continue;
        out_.handoffs.push_back(TraceHandoff{at->second, w});
        break;
      }
    }
  }

  const ProcessTrace& trace_;
  TraceIntervals out_;
};

}  // namespace

TraceIntervals trace_intervals(const ProcessTrace& trace) {
  IntervalBuilder builder(trace);
  // Events come in runs, one per thread file, each in its thread's order.
  for (size_t at = 0, end = 0; at < trace.events.size(); at = end) {
    end = at;
    while (end < trace.events.size() && trace.events[end].tid == trace.events[at].tid) ++end;
    builder.thread_run(at, end);
  }
  return builder.finish();
}

TraceNames::TraceNames(const ProcessProfile& process) {
  for (const LockSummary& lock : process.locks) locks_[{lock.address, lock.generation}] = &lock;
  for (const TraceThread& thread : process.trace.threads) threads_[thread.tid] = "";
  for (const TraceRecord& event : process.trace.events)
    if (event.kind == format::TraceKind::kThreadName) threads_[event.tid] = event.name;
  for (const ThreadSummary& thread : process.threads)
    if (threads_.count(thread.tid) && !thread.name.empty()) threads_[thread.tid] = thread.name;
  for (auto& [tid, name] : threads_)
    if (name.empty()) name = "thread " + std::to_string(tid);
}

const LockSummary* TraceNames::lock_of(const TraceRecord& call) const {
  auto known = locks_.find({call.object, call.generation});
  return known == locks_.end() ? nullptr : known->second;
}

std::string TraceNames::lock(const TraceRecord& call, format::Operation operation) const {
  if (const LockSummary* known = lock_of(call)) return lock_frame_name(*known, operation);
  LockSummary unknown;
  unknown.address = call.object;
  unknown.generation = call.generation;
  unknown.primitive = format::operation_primitive(operation);
  return lock_frame_name(unknown, operation);
}

}  // namespace lockscope
