#include "analysis/profile_section_readers.h"

#include <algorithm>
#include <cstring>
#include <iterator>

#include "analysis/hold_bounds.h"

namespace lockscope::profile_decoding {
namespace {

using format::SectionType;

CodeLocation location(uint32_t module, uint64_t offset, size_t module_count) {
  if (module != format::kNoModule && module >= module_count)
    throw BadFile("a call site refers to a module that is not in the module map");
  CodeLocation out;
  out.module = module;
  out.offset = offset;
  return out;
}

std::vector<std::string> split_arguments(const std::string& command_line) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < command_line.size()) {
    size_t end = command_line.find('\0', start);
    if (end == std::string::npos) end = command_line.size();
    out.push_back(command_line.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string hex(const uint8_t* bytes, uint32_t size) {
  std::string out;
  for (uint32_t i = 0; i < size && i < 20; ++i) out += fmt::format("{:02x}", bytes[i]);
  return out;
}

SiteSummary& site_at(ProcessProfile& out, const SitePlaces& sites, size_t site) {
  return out.locks[sites[site].first].sites[sites[site].second];
}

bool known_operation(uint16_t operation) {
  return operation >= 1 && operation <= static_cast<uint16_t>(format::Operation::kLast);
}

}  // namespace

LatencyHistogram HistogramBins::histogram(format::HistogramRef ref) {
  if (uint64_t{ref.first} + ref.count > bins_.size())
    throw BadFile("a histogram reference points outside the histograms section");
  budget_.take(ref.count);
  LatencyHistogram out;
  for (uint32_t i = 0; i < ref.count; ++i) {
    const format::HistogramBin bin = bins_[ref.first + i];
    if (bin.bucket >= static_cast<uint32_t>(LogHistogramLayout::kBuckets))
      throw BadFile("a histogram bucket is out of range");
    out.add(static_cast<int>(bin.bucket), bin.count);
  }
  return out;
}

void decode_process(const SectionSet& file, ProcessProfile& out) {
  const auto process = file.records<SectionType::kProcess>();
  if (process.size() != 1) throw BadFile("the process section must hold exactly one record");
  const format::ProcessRecord p = process[0];
  out.pid = p.pid;
  out.ppid = p.ppid;
  out.start_realtime_ns = p.start_realtime_ns;
  out.duration_ns = p.duration_ns;
  out.ticks_per_second = p.ticks_per_second;
  out.clock_source = static_cast<format::ClockSource>(p.clock_source);
  out.hold_sample_period = p.hold_sample_period ? p.hold_sample_period : 1;
  out.exit_path = static_cast<format::ExitPath>(p.exit_path);
  out.exit_status = p.exit_status;
  out.parent_was_profiled = p.parent_was_profiled != 0;
  out.executable = file.string(p.executable);
  out.arguments = split_arguments(file.string(p.command_line));
  if (p.exec_target) {
    out.exec_target = file.c_string(p.exec_target);
    if (file.version() >= 4) {  // then the file exec runs and why it is not profiled
      auto verdict =
          file.c_strings(p.exec_target + static_cast<uint32_t>(out.exec_target.size()) + 1, 2);
      if (verdict.size() > 0) out.exec_resolved = std::move(verdict[0]);
      if (verdict.size() > 1) out.exec_unprofilable = std::move(verdict[1]);
    }
  }
}

void decode_modules(const SectionSet& file, ProcessProfile& out) {
  for (const auto& m : file.records<SectionType::kModules>())
    out.modules.push_back(ModuleSummary{file.string(m.path), hex(m.build_id, m.build_id_size),
                                        m.load_bias, m.start, m.end});
}

void decode_threads(const SectionSet& file, HistogramBins& bins, ProcessProfile& out) {
  for (const auto& t : file.records<SectionType::kThreads>()) {
    ThreadSummary thread;
    thread.tid = t.tid;
    thread.name = std::string(t.name, strnlen(t.name, sizeof(t.name)));
    thread.flags = t.flags;
    thread.acquisitions = t.acquisitions;
    thread.releases = t.releases;
    thread.contended = t.contended;
    thread.failed = t.failed;
    thread.wait_sum_ns = t.wait_sum_ns;
    thread.wait_max_ns = t.wait_max_ns;
    thread.waits_only = bins.histogram(t.wait_histogram);
    thread.wait = thread.waits_only;
    thread.wait.add(0, t.acquisitions - std::min(t.acquisitions, t.contended));
    std::copy(std::begin(t.wait_ns_by_primitive), std::end(t.wait_ns_by_primitive),
              thread.wait_ns_by_primitive.begin());
    thread.barrier_last_arrivals = t.barrier_last_arrivals;
    out.threads.push_back(std::move(thread));
  }
}

void decode_locks(const SectionSet& file, ProcessProfile& out) {
  for (const auto& l : file.records<SectionType::kLocks>()) {
    LockSummary lock;
    lock.address = l.address;
    lock.generation = l.generation;
    if (l.primitive < 1 || l.primitive > static_cast<uint32_t>(format::Primitive::kLast))
      throw BadFile("a lock has an unknown primitive");
    lock.primitive = static_cast<format::Primitive>(l.primitive);
    lock.capacity = l.capacity;
    lock.kind = static_cast<format::MutexKind>(l.kind);
    lock.flags = l.flags;
    if (l.init_module != format::kNoModule || l.init_offset != 0)
      (l.flags & format::kLockFirstUseSite ? lock.first_use_site : lock.init_site) =
          location(l.init_module, l.init_offset, out.modules.size());
    lock.owner_changes = l.owner_changes;
    out.locks.push_back(std::move(lock));
  }
}

SitePlaces decode_sites(const SectionSet& file, HistogramBins& bins, ProcessProfile& out) {
  SitePlaces places;
  for (const auto& s : file.records<SectionType::kSites>()) {
    if (s.lock_index >= out.locks.size()) throw BadFile("a call site refers to a missing lock");
    if (!known_operation(s.operation)) throw BadFile("a call site has an unknown operation");
    SiteSummary site;
    site.operation = static_cast<format::Operation>(s.operation);
    site.location = location(s.module, s.offset, out.modules.size());
    site.count = s.count;
    site.contended = s.contended;
    site.failed = std::min(s.failed, s.count);
    site.wait_sum_ns = s.wait_sum_ns;
    site.wait_max_ns = s.wait_max_ns;
    site.hold_sum_ns = s.hold_sum_ns;
    site.hold_max_ns = s.hold_max_ns;
    // A bound wider than the estimate (one preempted sample among few) says only that the holds
    // lie between none and twice the estimate: capped there, as a lock's is (cap_lock_holds).
    cap_site_holds(site, out.duration_ns, out.threads.size());
    site.hold_error_ns = std::min(
        site.hold_sum_ns, static_cast<uint64_t>(double(site.hold_sum_ns) * s.hold_error_ppm / 1e6));
    site.hold_samples = s.hold_samples;
    site.behind_readers = s.behind_readers;
    site.behind_writer = s.behind_writer;
    site.with_waiters = s.with_waiters;
    site.without_waiters = s.without_waiters;
    site.arrived_last = s.arrived_last;
    site.wait = bins.histogram(s.wait_histogram);
    site.hold = bins.histogram(s.hold_histogram);
    places.push_back({s.lock_index, out.locks[s.lock_index].sites.size()});
    out.locks[s.lock_index].sites.push_back(std::move(site));
  }
  return places;
}

// Version 3: whom contended acquisitions waited behind (none in a version 2 file).
BlamePlaces decode_blame(const SectionSet& file, const SitePlaces& sites, ProcessProfile& out) {
  BlamePlaces places;
  for (const auto& b : file.records<SectionType::kBlame>()) {
    if (b.site >= sites.size()) throw BadFile("a blame record refers to a missing call site");
    auto& rows = site_at(out, sites, b.site).blame;
    places.emplace_back(b.site, rows.size());
    rows.push_back(
        Blame{location(b.holder_module, b.holder_offset, out.modules.size()), b.waits, b.wait_ns});
  }
  return places;
}

void decode_stacks(const SectionSet& file, ProcessProfile& out) {
  const auto frames = file.records<SectionType::kStackFrames>();
  ReferenceBudget frame_budget(frames.size(), "stack frame references");
  for (const auto& s : file.records<SectionType::kStacks>()) {
    if (uint64_t{s.first_frame} + s.frame_count > frames.size())
      throw BadFile("a stack refers to frames outside the stack frames section");
    if (s.frame_count > format::kMaxStackFrames)
      throw BadFile(fmt::format("a stack of {} frames, deeper than the runtime records ({})",
                                s.frame_count, format::kMaxStackFrames));
    frame_budget.take(s.frame_count);
    std::vector<CodeLocation> stack;
    stack.reserve(s.frame_count);
    for (uint32_t i = 0; i < s.frame_count; ++i) {
      const format::StackFrameRecord frame = frames[s.first_frame + i];
      stack.push_back(location(frame.module, frame.offset, out.modules.size()));
    }
    out.stacks.push_back(std::move(stack));
  }
}

void decode_site_stacks(const SectionSet& file, const SitePlaces& sites, ProcessProfile& out) {
  for (const auto& s : file.records<SectionType::kSiteStacks>()) {
    if (s.site >= sites.size() || s.stack >= out.stacks.size())
      throw BadFile("a site stack refers to a missing call site or stack");
    site_at(out, sites, s.site).stacks.push_back(SiteStack{s.stack, s.waits, s.wait_ns});
  }
}

void decode_hold_stacks(const SectionSet& file, const SitePlaces& sites, ProcessProfile& out) {
  for (const auto& s : file.records<SectionType::kSiteHoldStacks>()) {
    if (s.site >= sites.size() || s.stack >= out.stacks.size())
      throw BadFile("a hold stack refers to a missing call site or stack");
    site_at(out, sites, s.site)
        .hold_stacks.push_back(HoldStack{s.stack, s.waits, std::min(s.wait_ns, out.duration_ns)});
  }
}

void decode_acquire_stacks(const SectionSet& file, const SitePlaces& sites, ProcessProfile& out) {
  for (const auto& s : file.records<SectionType::kSiteAcquireStacks>()) {
    if (s.site >= sites.size() || s.stack >= out.stacks.size())
      throw BadFile("an acquire stack refers to a missing call site or stack");
    site_at(out, sites, s.site).acquire_stacks.push_back(SiteStack{s.stack, s.waits, 0});
  }
}

void decode_blame_stacks(const SectionSet& file, const SitePlaces& sites, const BlamePlaces& blame,
                         ProcessProfile& out) {
  for (const auto& b : file.records<SectionType::kBlameStacks>()) {
    const auto valid = [&](uint32_t stack) {
      return stack == format::kNoStack || stack < out.stacks.size();
    };
    if (b.blame >= blame.size() || !valid(b.waiter_stack) || !valid(b.holder_stack))
      throw BadFile("a blame stack record refers to a missing blame record or stack");
    const auto [site, row] = blame[b.blame];
    Blame& entry = site_at(out, sites, site).blame[row];
    if (b.waiter_stack != format::kNoStack) entry.waiter_stack = b.waiter_stack;
    if (b.holder_stack != format::kNoStack) entry.holder_stack = b.holder_stack;
    entry.holder_stack_at_acquire = (b.flags & format::kBlameHolderStackAtAcquire) != 0;
  }
}

void decode_cpu_handoffs(const SectionSet& file, const SitePlaces& sites, ProcessProfile& out) {
  for (const auto& h : file.records<SectionType::kCpuHandoffs>()) {
    if (h.site >= sites.size()) throw BadFile("a CPU handoff record refers to a missing call site");
    SiteSummary& site = site_at(out, sites, h.site);
    site.cross_cpu_handoffs = h.cross_cpu;
    site.same_cpu_handoffs = h.same_cpu;
  }
}

// Version 3: lock order (a version 2 file has none: it was not recorded).
void decode_lock_order(const SectionSet& file, ProcessProfile& out) {
  for (const auto& e : file.records<SectionType::kLockOrder>()) {
    if (e.from_lock >= out.locks.size() || e.to_lock >= out.locks.size())
      throw BadFile("a lock-order edge refers to a missing lock");
    if (!known_operation(e.to_operation))
      throw BadFile("a lock-order edge has an unknown operation");
    LockOrderEdge edge;
    edge.from_lock = e.from_lock;
    edge.to_lock = e.to_lock;
    edge.from_site = location(e.from_module, e.from_offset, out.modules.size());
    edge.to_site = location(e.to_module, e.to_offset, out.modules.size());
    edge.tid = e.tid;
    edge.to_operation = static_cast<format::Operation>(e.to_operation);
    // 0: how the held lock was taken is not known.
    if (e.from_operation != 0 && !known_operation(e.from_operation))
      throw BadFile("a lock-order edge has an unknown operation");
    if (e.from_operation) edge.from_operation = static_cast<format::Operation>(e.from_operation);
    out.lock_order.push_back(std::move(edge));
  }
}

void decode_order_stacks(const SectionSet& file, ProcessProfile& out) {
  for (const auto& s : file.records<SectionType::kOrderStacks>()) {
    if (s.edge >= out.lock_order.size() || s.stack >= out.stacks.size())
      throw BadFile("a lock-order stack refers to a missing edge or stack");
    out.lock_order[s.edge].stack = s.stack;
  }
}

// The threads' lifetimes, CPU times and policies (optional: a file without them, or a thread
// without a record, leaves them not known).
void decode_thread_facts(const SectionSet& file, ProcessProfile& out) {
  std::vector<bool> seen(out.threads.size());
  for (const auto& f : file.records<SectionType::kThreadFacts>()) {
    if (f.thread >= out.threads.size())
      throw BadFile("a thread facts record refers to a missing thread");
    if (seen[f.thread]) throw BadFile("a thread has two thread facts records");
    seen[f.thread] = true;
    ThreadSummary& thread = out.threads[f.thread];
    // An end before the start is no lifetime. Times past the file's write are the TSC's rate
    // against CLOCK_MONOTONIC's (the duration's) over the run, microseconds: capped there.
    thread.lifetime_known =
        (f.known & format::kThreadLifetimeKnown) != 0 && (f.end_ns == 0 || f.end_ns >= f.start_ns);
    if (thread.lifetime_known) {
      thread.start_ns = std::min(f.start_ns, out.duration_ns);
      thread.end_ns =
          f.end_ns == 0 ? 0 : std::max<uint64_t>(1, std::min(f.end_ns, out.duration_ns));
    }
    thread.cpu_known = (f.known & format::kThreadCpuKnown) != 0;
    if (thread.cpu_known) thread.cpu_ns = f.cpu_ns;
    thread.sched_known = (f.known & format::kThreadSchedKnown) != 0;
    if (thread.sched_known) {
      thread.sched_policy = f.sched_policy;
      thread.sched_priority = f.sched_priority;
    }
  }
}

// The CPUs the process could run on (optional, as the thread facts).
void decode_process_facts(const SectionSet& file, ProcessProfile& out) {
  const auto process = file.records<SectionType::kProcessFacts>();
  if (process.size() > 1) throw BadFile("the process facts section must hold one record at most");
  if (process.size() == 1) out.online_cpus = process[0].online_cpus;
}

// Optional: a file without it has every counter 0.
void decode_counters(const SectionSet& file, ProcessProfile& out) {
  for (const auto& c : file.records<SectionType::kCounters>())
    out.counters[static_cast<format::Counter>(c.id)] += c.value;
}

}  // namespace lockscope::profile_decoding
