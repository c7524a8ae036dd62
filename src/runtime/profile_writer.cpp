#include "runtime/profile_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <initializer_list>
#include <utility>

#include "common/crc32.h"
#include "runtime/byte_buffer.h"
#include "runtime/cancellation.h"
#include "runtime/file_size_limit.h"
#include "runtime/module_map.h"
#include "runtime/open_at_descriptor_limit.h"
#include "runtime/own_proc_files.h"
#include "runtime/raw_log.h"
#include "runtime/recorder.h"
#include "runtime/runtime_state.h"
#include "runtime/unloaded_modules.h"

namespace lockscope::runtime {
namespace {

using format::SectionType;

struct Sections {
  ByteBuffer strings, process, modules, threads, locks, sites, histograms, counters, order, blame,
      cpu_handoffs, frames, stacks, site_stacks, order_stacks, blame_stacks, hold_stacks,
      acquire_stacks, thread_facts, process_facts;

  format::StringRef add_string(const char* text, size_t length) {
    format::StringRef ref{static_cast<uint32_t>(strings.size()), static_cast<uint32_t>(length)};
    strings.append(text, length);
    return ref;
  }
  format::HistogramRef next_histogram() const {
    return {static_cast<uint32_t>(histograms.size() / sizeof(format::HistogramBin)), 0};
  }
  void add_bin(format::HistogramRef& ref, int bucket, uint64_t count) {
    histograms.append_record(format::HistogramBin{static_cast<uint32_t>(bucket), 0, count});
    ++ref.count;
  }
  format::HistogramRef add_histogram(const Histogram& histogram) {
    format::HistogramRef ref = next_histogram();
    for (int b = 0; b < LogHistogramLayout::kBuckets; ++b)
      if (histogram[b]) add_bin(ref, b, histogram[b]);
    return ref;
  }
  format::HistogramRef add_histogram(const SparseHistogram* histogram) {
    format::HistogramRef ref = next_histogram();
    for_each_bin(histogram, [&](int bucket, uint64_t count) { add_bin(ref, bucket, count); });
    return ref;
  }
};

// Every section, in type order, with its record size and where Sections keeps its payload: one
// row per SectionType, checked, so that a new section type cannot be left unwritten.
struct SectionLayout {
  SectionType type;
  size_t record_size;
  ByteBuffer Sections::*payload;
};
constexpr SectionLayout kSectionLayout[] = {
    {SectionType::kStrings, 1, &Sections::strings},
    {SectionType::kProcess, sizeof(format::ProcessRecord), &Sections::process},
    {SectionType::kModules, sizeof(format::ModuleRecord), &Sections::modules},
    {SectionType::kThreads, sizeof(format::ThreadRecord), &Sections::threads},
    {SectionType::kLocks, sizeof(format::LockRecord), &Sections::locks},
    {SectionType::kSites, sizeof(format::SiteRecord), &Sections::sites},
    {SectionType::kHistograms, sizeof(format::HistogramBin), &Sections::histograms},
    {SectionType::kCounters, sizeof(format::CounterRecord), &Sections::counters},
    {SectionType::kLockOrder, sizeof(format::LockOrderRecord), &Sections::order},
    {SectionType::kBlame, sizeof(format::BlameRecord), &Sections::blame},
    {SectionType::kCpuHandoffs, sizeof(format::CpuHandoffRecord), &Sections::cpu_handoffs},
    {SectionType::kStackFrames, sizeof(format::StackFrameRecord), &Sections::frames},
    {SectionType::kStacks, sizeof(format::StackRecord), &Sections::stacks},
    {SectionType::kSiteStacks, sizeof(format::SiteStackRecord), &Sections::site_stacks},
    {SectionType::kOrderStacks, sizeof(format::OrderStackRecord), &Sections::order_stacks},
    {SectionType::kBlameStacks, sizeof(format::BlameStackRecord), &Sections::blame_stacks},
    {SectionType::kSiteHoldStacks, sizeof(format::SiteHoldStackRecord), &Sections::hold_stacks},
    {SectionType::kSiteAcquireStacks, sizeof(format::SiteAcquireStackRecord),
     &Sections::acquire_stacks},
    {SectionType::kThreadFacts, sizeof(format::ThreadFactsRecord), &Sections::thread_facts},
    {SectionType::kProcessFacts, sizeof(format::ProcessFactsRecord), &Sections::process_facts},
};
static_assert(format::lists_each_value_in_order<SectionType>(kSectionLayout, &SectionLayout::type),
              "one row per SectionType 1..kLast, in order");

// (slot, generation) -> index of its LockRecord: open addressing over mmap'd memory.
class LockIndex {
 public:
  bool create(size_t expected) {
    capacity_ = 1024;
    while (capacity_ < expected * 2) capacity_ *= 2;
    if (!memory_.reserve(capacity_ * sizeof(Entry))) return false;
    entries_ = reinterpret_cast<Entry*>(memory_.data());
    memset(static_cast<void*>(entries_), 0xFF, capacity_ * sizeof(Entry));
    return true;
  }
  void put(uint32_t slot, uint32_t generation, uint32_t record) {
    const uint64_t key = (uint64_t{slot} << 32) | generation;
    size_t i = hash(key);
    while (entries_[i].key != kEmpty && entries_[i].key != key) i = (i + 1) & (capacity_ - 1);
    entries_[i] = Entry{key, record};
  }
  uint32_t get(uint32_t slot, uint32_t generation) const {
    const uint64_t key = (uint64_t{slot} << 32) | generation;
    for (size_t i = hash(key);; i = (i + 1) & (capacity_ - 1)) {
      if (entries_[i].key == key) return entries_[i].record;
      if (entries_[i].key == kEmpty) return format::kNoModule;
    }
  }

 private:
  struct Entry {
    uint64_t key;
    uint32_t record;
  };
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  // A full mix: (slot << 32 | generation) times a constant keeps its low bits zero for generation
  // 0, and every lock then probed from the same slot (quadratic in the number of locks).
  size_t hash(uint64_t key) const {
    key ^= key >> 33;
    key *= 0xFF51AFD7ED558CCDull;
    key ^= key >> 33;
    key *= 0xC4CEB9FE1A85EC53ull;
    return static_cast<size_t>(key ^ (key >> 33)) & (capacity_ - 1);
  }
  ByteBuffer memory_;
  Entry* entries_ = nullptr;
  size_t capacity_ = 0;
};

size_t read_file(const char* path, char* buffer, size_t size) {
  NoCancellation no_cancellation;  // no cancellation point of ours (cancellation.h)
  const int fd = open_at_descriptor_limit(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t total = 0;
  while (total < size) {
    const ssize_t got = read(fd, buffer + total, size - total);
    if (got <= 0) break;
    total += static_cast<size_t>(got);
  }
  close(fd);
  return total;
}

void fill_process(Sections& out, const Runtime& rt, format::ExitPath exit_path, int exit_status) {
  ByteBuffer scratch;
  format::ProcessRecord record{};
  record.pid = rt.pid;
  record.ppid = rt.ppid;
  record.start_realtime_ns = rt.start_realtime_ns;
  record.duration_ns = Clock::monotonic_ns() - rt.start_monotonic_ns;
  record.ticks_per_second = rt.clock.ticks_per_second;
  record.clock_source = static_cast<uint32_t>(rt.clock.use_tsc ? format::ClockSource::kTsc
                                                               : format::ClockSource::kMonotonic);
  record.hold_sample_period = rt.hold_sample_period;
  record.exit_path = static_cast<uint32_t>(exit_path);
  record.exit_status = exit_status;
  record.parent_was_profiled = rt.parent_was_profiled ? 1 : 0;
  if (exit_path == format::ExitPath::kExec && rt.exec_target_size > 0) {
    record.exec_target = static_cast<uint32_t>(out.strings.size()) + 1;
    out.strings.append(rt.exec_target, rt.exec_target_size);
  }
  char exe[4096];
  const ssize_t exe_length = read_own_executable_path(exe, sizeof(exe));
  record.executable = out.add_string(exe, exe_length > 0 ? static_cast<size_t>(exe_length) : 0);
  if (scratch.reserve(1 << 20)) {
    char* text = reinterpret_cast<char*>(scratch.data());
    size_t length = read_file(kOwnCommandLine, text, 1 << 20);
    if (length == 0) length = read_file(kOwnCommandLineFallback, text, 1 << 20);
    record.command_line = out.add_string(text, length);
  }
  out.process.append_record(record);
  out.process_facts.append_record(format::ProcessFactsRecord{rt.online_cpus, 0});
}

void fill_modules(Sections& out, const ModuleList& list) {
  for (uint32_t i = 0; i < list.count; ++i) {
    const LoadedModule& m = list.modules[i];
    format::ModuleRecord record{};
    record.load_bias = m.load_bias;
    record.start = m.start;
    record.end = m.end;
    record.path = out.add_string(m.path, strlen(m.path));
    record.build_id_size = m.build_id_size;
    memcpy(record.build_id, m.build_id, sizeof(record.build_id));
    out.modules.append_record(record);
  }
}

void split_site(const ModuleList& modules, uintptr_t address, uint32_t& module, uint64_t& offset) {
  module = modules.find(address);
  offset = module == format::kNoModule ? address : address - modules.modules[module].load_bias;
}

// The site's total hold time: its exact holds, plus the holds that were not timed estimated from
// the sampled ones (M untimed-or-sampled holds x their mean: a ratio estimator, unbiased when the
// 1-in-N samples are representative), with the 95 % bound of that estimate's error, from the
// samples' variance and the finite-population correction, in millionths of the total. A single
// sample gives no variance: the whole sampled part is then the bound.
uint64_t hold_estimate(uint64_t acquisitions, const SiteDetail& d, uint32_t& error_ppm) {
  error_ppm = 0;
  const uint64_t estimated =
      acquisitions > d.hold_exact_count ? acquisitions - d.hold_exact_count : 0;
  if (d.hold_sampled_count == 0 || estimated == 0) return d.hold_sum_ns;
  const double n = static_cast<double>(d.hold_sampled_count);
  const double m =
      static_cast<double>(estimated < d.hold_sampled_count ? d.hold_sampled_count : estimated);
  const double mean = static_cast<double>(d.hold_sampled_ns) / n;
  const double sampled_part = m * mean;
  double bound = sampled_part;
  if (d.hold_sampled_count >= 2) {
    double variance = (d.hold_sampled_sq_ns2 - n * mean * mean) / (n - 1);
    if (variance < 0) variance = 0;
    double correction = 1 - n / m;
    if (correction < 0) correction = 0;
    bound = 1.96 * m * __builtin_sqrt(variance / n * correction);
  }
  const double total = static_cast<double>(d.hold_sum_ns) + sampled_part;
  if (total > 0) {
    const double ppm = bound / total * 1e6;
    error_ppm = ppm >= 4e9 ? 4000000000u : static_cast<uint32_t>(ppm + 0.5);
  }
  return static_cast<uint64_t>(total + 0.5);
}

format::LockRecord lock_record(const ModuleList& modules, uintptr_t address, uint32_t generation,
                               uint32_t primitive, uint32_t kind, uint32_t flags, uint32_t capacity,
                               uintptr_t init_site) {
  format::LockRecord record{};
  record.address = address;
  record.generation = generation;
  record.primitive = primitive ? primitive : static_cast<uint32_t>(format::Primitive::kMutex);
  // A mutex's or rwlock's slot keeps its holder stack there (holder_stack): not a capacity.
  const auto kind_of = static_cast<format::Primitive>(record.primitive);
  record.capacity =
      kind_of == format::Primitive::kBarrier || kind_of == format::Primitive::kSemaphore ? capacity
                                                                                         : 0;
  record.kind = kind;
  record.flags = flags;
  if (init_site)
    split_site(modules, init_site, record.init_module, record.init_offset);
  else
    record.init_module = format::kNoModule;
  return record;
}

// Holder stack `number` of the process-wide table as a number of `all`'s store (0: none).
uint32_t holder_stack_in(Runtime& rt, SiteTable& all, uint32_t published) {
  const StackStore& stacks = rt.holder_stacks.stacks();
  const uint32_t number = published & kHolderStackNumber;
  if (number == 0 || number > stacks.size()) return 0;
  uintptr_t frames[StackStore::kMaxDepth];
  return all.intern_stack(frames, stacks.copy(number, frames));
}

void fill_locks_and_sites(Sections& out, Runtime& rt, const ModuleList& modules, SiteTable& all) {
  LockTable& locks = rt.locks;
  LockIndex index;
  const size_t live = locks.size();
  if (!index.create(live + locks.retired_count() + 16)) return;
  // Sized once (a hint, which fails nothing when refused; they grow when short): a doubling
  // buffer copies what it holds each time.
  out.locks.reserve_hint((live + locks.retired_count()) * sizeof(format::LockRecord));
  out.sites.reserve_hint(all.used() * sizeof(format::SiteRecord));
  uint32_t next = 0;
  for (size_t i = 0; i < live; ++i) {
    const auto s = static_cast<uint32_t>(i);
    LockSlot& slot = locks.slot(s);
    const uint32_t generation = slot.generation.load(std::memory_order_relaxed);
    // A destroyed lock's next generation, never initialised nor used, is not a lock at all.
    if (generation > 0 && !slot.used.load(std::memory_order_relaxed) &&
        slot.init_site.load(std::memory_order_relaxed) == 0)
      continue;
    out.locks.append_record(lock_record(
        modules, slot.address.load(std::memory_order_relaxed), generation,
        slot.primitive.load(std::memory_order_relaxed), slot.kind.load(std::memory_order_relaxed),
        slot.flags.load(std::memory_order_relaxed), slot.capacity.load(std::memory_order_relaxed),
        slot.init_site.load(std::memory_order_relaxed)));
    index.put(s, generation, next++);
  }
  for (size_t i = 0; i < locks.retired_count(); ++i) {
    const RetiredLock& r = locks.retired(i);
    out.locks.append_record(lock_record(modules, r.address, r.generation, r.primitive, r.kind,
                                        r.flags, r.capacity, r.init_site));
    index.put(r.slot, r.generation, next++);
  }
  for (size_t i = 0; i < all.used(); ++i) {
    const SiteStats& site = all.inserted(i);
    uint32_t lock = index.get(site.key.lock_slot, site.key.generation);
    if (lock == format::kNoModule) {  // its retired record was dropped: keep the identity
      const LockSlot& slot = locks.slot(site.key.lock_slot);
      const uint32_t primitive = static_cast<uint32_t>(
          format::operation_primitive(static_cast<format::Operation>(site.key.operation)));
      out.locks.append_record(lock_record(modules, slot.address.load(std::memory_order_relaxed),
                                          site.key.generation, primitive, 0, 0, 0, 0));
      index.put(site.key.lock_slot, site.key.generation, lock = next++);
    }
    format::SiteRecord record{};
    record.lock_index = lock;
    record.operation = site.key.operation;
    split_site(modules, site.key.site, record.module, record.offset);
    record.count = site.count;
    SiteDetail whole{};  // a short detail's fields past its hold fields are zero
    const SiteDetail* detail = site.detail;
    if (detail != nullptr && !detail->full) {
      __builtin_memcpy(static_cast<void*>(&whole), detail, kShortDetailBytes);
      detail = &whole;
    }
    const uint64_t owner_changes = owner_changes_of(site);
    if (owner_changes != 0 && !out.locks.failed() &&
        (lock + 1) * sizeof(format::LockRecord) <= out.locks.size())  // a lock's: its sites' sum
      reinterpret_cast<format::LockRecord*>(out.locks.data())[lock].owner_changes += owner_changes;
    if (detail != nullptr) {
      record.contended = detail->contended;
      record.failed = detail->failed;
      record.wait_sum_ns = detail->wait_sum_ns;
      record.wait_max_ns = detail->wait_max_ns;
      record.hold_sum_ns =
          hold_estimate(site.count - detail->failed, *detail, record.hold_error_ppm);
      record.hold_max_ns = detail->hold_max_ns;
      record.hold_samples = detail->hold_exact_count + detail->hold_sampled_count;
      record.behind_readers = detail->behind_readers;
      record.behind_writer = detail->behind_writer;
      record.with_waiters = detail->with_waiters;
      record.without_waiters = detail->without_waiters;
      record.arrived_last = detail->arrived_last;
      record.wait_histogram = out.add_histogram(detail->wait_histogram);
      record.hold_histogram = out.add_histogram(detail->hold_histogram);
      const auto site_number = static_cast<uint32_t>(out.sites.size() / sizeof(format::SiteRecord));
      for (const BlameRow* row = detail->blame; row; row = row->next) {
        format::BlameRecord blame{};
        blame.site = site_number;
        if (row->key.holder_site)
          split_site(modules, row->key.holder_site, blame.holder_module, blame.holder_offset);
        else
          blame.holder_module = format::kNoModule;
        blame.waits = row->waits;
        blame.wait_ns = row->wait_ns;
        // Its stacks join the sites' (the same numbering: `all`'s store, whose waiter stacks
        // these already are; the holder's comes from the process-wide table).
        const uint32_t holder_stack = holder_stack_in(rt, all, row->key.holder_stack);
        if (row->key.waiter_stack != 0 || holder_stack != 0)
          out.blame_stacks.append_record(format::BlameStackRecord{
              static_cast<uint32_t>(out.blame.size() / sizeof(format::BlameRecord)),
              row->key.waiter_stack != 0 ? row->key.waiter_stack - 1 : format::kNoStack,
              holder_stack != 0 ? holder_stack - 1 : format::kNoStack,
              row->key.holder_stack & kHolderStackAtAcquire ? format::kBlameHolderStackAtAcquire
                                                            : 0u});
        out.blame.append_record(blame);
      }
      // The three stack lists have one record layout (SiteStackRecord), a section each.
      for (const auto& [rows, section] : {std::pair{detail->stacks, &out.site_stacks},
                                          std::pair{detail->hold_stacks, &out.hold_stacks},
                                          std::pair{detail->acquire_stacks, &out.acquire_stacks}})
        for (const StackRow* row = rows; row; row = row->next)
          section->append_record(
              format::SiteStackRecord{site_number, row->stack - 1, row->waits, row->wait_ns});
      if (detail->cross_cpu || detail->same_cpu)
        out.cpu_handoffs.append_record(
            format::CpuHandoffRecord{site_number, 0, detail->cross_cpu, detail->same_cpu});
    } else {
      record.wait_histogram = record.hold_histogram = out.next_histogram();
    }
    out.sites.append_record(record);
  }
  for (size_t i = 0; i < rt.order.size(); ++i) {
    const OrderEdge& edge = rt.order.edge(i);
    format::LockOrderRecord record{};
    record.from_lock = index.get(edge.from_slot, edge.from_generation);
    record.to_lock = index.get(edge.to_slot, edge.to_generation);
    // A lock whose every acquisition failed is not in the locks section: nor is its edge.
    if (record.from_lock == format::kNoModule || record.to_lock == format::kNoModule) continue;
    if (edge.from_site)
      split_site(modules, edge.from_site, record.from_module, record.from_offset);
    else
      record.from_module = format::kNoModule;
    split_site(modules, edge.to_site, record.to_module, record.to_offset);
    record.tid = edge.tid;
    record.to_operation = edge.to_operation;
    record.from_operation = edge.from_operation;
    // Its stack joins the sites' stacks (the same numbering: interned into the same store).
    if (edge.stack_depth != 0)
      if (const uint32_t stack = all.intern_stack(edge.stack, edge.stack_depth))
        out.order_stacks.append_record(format::OrderStackRecord{
            static_cast<uint32_t>(out.order.size() / sizeof(format::LockOrderRecord)), stack - 1});
    out.order.append_record(record);
  }
  const StackStore& stacks = all.stacks();
  for (uint32_t n = 1; n <= stacks.size(); ++n) {
    format::StackRecord record{
        static_cast<uint32_t>(out.frames.size() / sizeof(format::StackFrameRecord)),
        stacks.depth(n)};
    for (uint32_t i = 0; i < record.frame_count; ++i) {
      format::StackFrameRecord frame{};
      split_site(modules, stacks.frame(n, i), frame.module, frame.offset);
      out.frames.append_record(frame);
    }
    out.stacks.append_record(record);
  }
}

bool records_now(const ThreadState& t) {
  const auto state = static_cast<SlotState>(t.state.load(std::memory_order_acquire));
  return (state == SlotState::kLive || state == SlotState::kExiting) && t.tid != 0;
}

// A thread that still holds a slot (running, or past its exit destructor), read in one go: its
// totals, what it is blocked in or holding, and how many calls its table had then.
struct LiveThread {
  format::ThreadRecord record;
  format::ThreadFactsRecord facts;
  uint64_t calls_at_snapshot;
  uint32_t slot;
  int extra_wait_bucket;  // the in-progress lock wait's bucket, -1 when none
};

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

// Calls that threads still running made after their snapshot: not in this file, but counted.
uint64_t calls_since_snapshot(Runtime& rt, ByteBuffer& live) {
  uint64_t calls = 0;
  const auto* threads = reinterpret_cast<const LiveThread*>(live.data());
  for (size_t i = 0; i < live.size() / sizeof(LiveThread); ++i) {
    const ThreadState& t = rt.threads.slot(threads[i].slot);
    if (records_now(t)) calls += calls_in(t.sites) - threads[i].calls_at_snapshot;
  }
  return calls;
}

// The threads that made calls since they were paused (a pause they gave up: kMaxPauseNs).
uint32_t threads_active_since_paused(Runtime& rt) {
  uint32_t active = 0;
  for (size_t i = 0; i < rt.threads.slot_count(); ++i) {
    const ThreadState& t = rt.threads.slot(i);
    if (records_now(t) && calls_made(t) != t.calls_when_paused) ++active;
  }
  return active;
}

// A thread's row and its facts' (only when the row was written: facts never name a missing row).
void add_thread(Sections& out, const format::ThreadRecord& record,
                format::ThreadFactsRecord facts) {
  facts.thread = static_cast<uint32_t>(out.threads.size() / sizeof(format::ThreadRecord));
  if (out.threads.append_record(record)) out.thread_facts.append_record(facts);
}

// Threads that still hold a slot (as snapshot), then those long gone.
uint64_t fill_threads(Sections& out, Runtime& rt, ByteBuffer& live) {
  uint64_t running = 0;
  auto* threads = reinterpret_cast<LiveThread*>(live.data());
  for (size_t i = 0; i < live.size() / sizeof(LiveThread); ++i) {
    LiveThread& thread = threads[i];
    if (!(thread.record.flags & format::kThreadExited)) ++running;
    thread.record.wait_histogram = out.add_histogram(rt.threads.slot(thread.slot).wait_histogram);
    if (thread.extra_wait_bucket >= 0)
      out.add_bin(thread.record.wait_histogram, thread.extra_wait_bucket, 1);
    add_thread(out, thread.record, thread.facts);
  }
  for (size_t i = 0; i < rt.threads.finished_count(); ++i) {
    format::ThreadRecord record = rt.threads.finished(i);
    format::HistogramRef ref = out.next_histogram();
    for (uint32_t b = 0; b < record.wait_histogram.count; ++b) {
      const format::HistogramBin& bin = rt.threads.finished_bin(record.wait_histogram.first + b);
      out.add_bin(ref, static_cast<int>(bin.bucket), bin.count);
    }
    record.wait_histogram = ref;
    add_thread(out, record, rt.threads.finished_facts(i));
  }
  return running;
}

// The file as the pieces it is written from: its header, then each section's header and payload,
// where the payload already is (no copy of the whole profile into one buffer: megabytes of fresh
// memory, each page a fault, on a server's profile).
struct FilePieces {
  static constexpr size_t kSections = sizeof(kSectionLayout) / sizeof(kSectionLayout[0]) + 1;
  format::FileHeader header{};
  format::SectionHeader section_headers[kSections];
  const unsigned char* payloads[kSections];
  uint32_t sections = 0;
  uint64_t size = sizeof(format::FileHeader);

  void add(SectionType type, size_t record_size, ByteBuffer* payload) {
    format::SectionHeader& section = section_headers[sections];
    section = format::SectionHeader{};
    section.type = static_cast<uint32_t>(type);
    section.record_size = static_cast<uint32_t>(record_size);
    section.payload_size = payload ? payload->size() : 0;
    section.record_count = record_size ? section.payload_size / record_size : 0;
    section.payload_crc = crc32(0, payload ? payload->data() : nullptr, section.payload_size);
    payloads[sections] = payload ? payload->data() : nullptr;
    size += sizeof(format::SectionHeader) + section.payload_size;
    ++sections;
  }
};

// The whole file from its start, in one writev where it can (its header, then each section's
// header and payload: a write call apiece cost a short-lived process's exit 25 system calls);
// false (errno EFBIG) where the next write would start at the program's file size limit (the
// kernel would end the program with SIGXFSZ).
bool write_all(int fd, const FilePieces& file);

// The file into the process's kept profile file (Runtime::kept_profile_fd), from its start, when
// that descriptor still is that file.
bool write_kept_profile(Runtime& rt, const FilePieces& file) {
  if (rt.kept_profile_fd < 0 || !rt.kept_profile.is(rt.kept_profile_fd)) {
    errno = EACCES;
    return false;
  }
  return lseek(rt.kept_profile_fd, 0, SEEK_SET) == 0 && ftruncate(rt.kept_profile_fd, 0) == 0 &&
         write_all(rt.kept_profile_fd, file);
}

bool write_all(int fd, const FilePieces& file) {
  iovec pieces[1 + 2 * FilePieces::kSections];
  int count = 0;
  auto add = [&](const void* data, size_t size) {
    if (size != 0) pieces[count++] = iovec{const_cast<void*>(data), size};
  };
  add(&file.header, sizeof(file.header));
  for (uint32_t i = 0; i < file.sections; ++i) {
    add(&file.section_headers[i], sizeof(format::SectionHeader));
    add(file.payloads[i], file.section_headers[i].payload_size);
  }
  const uint64_t limit = file_size_limit();
  uint64_t offset = 0;
  for (int first = 0; first < count;) {
    if (offset >= limit) {
      errno = EFBIG;
      return false;
    }
    ssize_t n = writev(fd, pieces + first, count - first);
    // A seccomp filter that allows write but refuses writev: one piece at a time.
    if (n < 0 && (errno == EPERM || errno == ENOSYS))
      n = write(fd, pieces[first].iov_base, pieces[first].iov_len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    offset += static_cast<uint64_t>(n);
    // Past what was written: whole pieces, then into the one it stopped in.
    for (auto left = static_cast<size_t>(n); left != 0;) {
      if (left >= pieces[first].iov_len) {
        left -= pieces[first++].iov_len;
      } else {
        pieces[first].iov_base = static_cast<unsigned char*>(pieces[first].iov_base) + left;
        pieces[first].iov_len -= left;
        left = 0;
      }
    }
  }
  return true;
}

// The name a profile (or a snapshot) is written under before it is renamed into place: hidden,
// in the same directory. False when it does not fit (a directory name near PATH_MAX would be cut
// short, and the cut name could be another file's).
bool temporary_path(const Runtime& rt, bool snapshot, char (&out)[4200]) {
  const int length =
      snprintf(out, sizeof(out), "%s/.%u-%llu%s.tmp", rt.directory, rt.pid,
               static_cast<unsigned long long>(rt.start_realtime_ns), snapshot ? ".snapshot" : "");
  return length >= 0 && length < static_cast<int>(sizeof(out));
}

}  // namespace

bool profile_path(char* out) {
  const Runtime& rt = runtime();
  const int length =
      snprintf(out, 4096, "%s/%u-%llu%s", rt.directory, rt.pid,
               static_cast<unsigned long long>(rt.start_realtime_ns), format::kFileSuffix);
  return length >= 0 && length < 4096;
}

bool write_profile(format::ExitPath exit_path, int exit_status, char* path_out, bool from_signal) {
  NoCancellation no_cancellation;  // no cancellation point of ours (cancellation.h)
  Runtime& rt = runtime();
  const bool interrupted_lockscope = inside_lockscope();
  const uint64_t began_ns = Clock::monotonic_ns();
  InsideLockscope inside;
  const int saved_errno = errno;
  // Everything recorded: exited threads (merged) plus live threads' tables, into a scratch table so
  // the recording state is left untouched.
  SiteTable all;
  uint64_t dropped = 0;
  // The module map first, before any lock of ours is held: dl_iterate_phdr takes the loader's
  // lock, and a thread inside dlopen may be waiting for ours (its first lock call registers it).
  ModuleList modules;
  modules.collect();
  append_unloaded_modules(modules);
  // A handler that ends the process (_exit, exit) on a thread that was writing a snapshot, or
  // registering itself, holds the lock already: it would wait for itself, and that book-keeping's
  // end is never reached. Those holds block the thread's signals (signals_blocked.h), so only a
  // fault's handler can come here so.
  if (rt.merge_lock.held_by_this_thread() || rt.file_lock.held_by_this_thread()) {
    // In the file's phase: the snapshot's temporary file would be left behind, half written.
    char temporary[4200];
    if (rt.file_lock.held_by_this_thread() && temporary_path(rt, true, temporary))
      unlink(temporary);
    RawLine()
        .append("profile of pid ")
        .append(rt.pid)
        .append(
            " not written: the process ended while its thread was inside lockscope's own "
            "book-keeping (a snapshot, its registration)")
        .emit();
    errno = saved_errno;
    return false;
  }
  if (!from_signal) {
    rt.merge_lock.lock();
  } else if (!rt.merge_lock.try_lock_for(interrupted_lockscope ? 0 : 1000)) {
    // The signal interrupted the lock's holder (this thread, or one that never lets go).
    RawLine()
        .append("profile of pid ")
        .append(rt.pid)
        .append(" not written: the signal arrived while lockscope's own lock was held")
        .emit();
    return false;
  }
  rt.threads.take_late_exits();  // threads that left while another write held the lock
  // The other threads stopped at a call boundary (thread_pause.h) until the locks' owner changes
  // and the threads' histograms are read too: one moment's figures.
  const uint32_t not_paused = pause_other_threads(rt);
  uint64_t counter_values[format::kCounterSlots];
  for (uint32_t i = 0; i < format::kCounterSlots; ++i)
    counter_values[i] = rt.counters[i].load(std::memory_order_relaxed);
  ByteBuffer live;
  // The distinct keys are at least the largest table's, and threads of a pool share most of
  // theirs: sized for the gone threads' and the largest live one's, the index grows from there if
  // need be (a sum over 64 workers of one server would map it 64 times too large).
  all.use_huge_pages();  // filled here, off the program's critical sections
  size_t largest = 0;
  for (size_t i = 0; i < rt.threads.slot_count(); ++i)
    if (records_now(rt.threads.slot(i)) && rt.threads.slot(i).sites.used() > largest)
      largest = rt.threads.slot(i).sites.used();
  all.reserve(rt.merged.used() + largest);  // a hint: without the memory, the index grows later
  dropped += all.merge_from(rt.merged);
  dropped += snapshot_threads(rt, all, live, counter_values);

  Sections out;
  for (const SectionLayout& section : kSectionLayout)  // written whole (byte_buffer.h)
    (out.*section.payload).use_huge_pages_from(ByteBuffer::kSectionHugeFromBytes);
  fill_process(out, rt, exit_path, exit_status);
  fill_modules(out, modules);
  fill_locks_and_sites(out, rt, modules, all);
  const uint64_t live_threads = fill_threads(out, rt, live);
  const bool pause_held = resume_other_threads(rt);
  // The paused threads gave up waiting (kMaxPauseNs) and went on: those that made calls while the
  // file was assembled were not paused either.
  const uint32_t went_on = pause_held ? 0 : threads_active_since_paused(rt);
  counter_values[static_cast<int>(format::Counter::kThreadsNotPaused)] +=
      went_on > not_paused ? went_on : not_paused;
  counter_values[static_cast<int>(format::Counter::kCallsAfterSnapshot)] =
      calls_since_snapshot(rt, live);
  rt.merge_lock.unlock();
  constexpr uint32_t kLastCounter = static_cast<uint32_t>(format::Counter::kLast);
  counter_values[static_cast<int>(format::Counter::kDroppedSites)] += dropped;
  counter_values[static_cast<int>(format::Counter::kThreadsLiveAtExit)] = live_threads;
  counter_values[static_cast<int>(format::Counter::kDroppedLocks)] += rt.locks.retired_dropped();
  counter_values[static_cast<int>(format::Counter::kDroppedOrderEdges)] += rt.order.dropped();
  for (uint32_t id = 1; id <= kLastCounter; ++id)
    out.counters.append_record(format::CounterRecord{id, 0, counter_values[id]});
  all.reset();

  FilePieces file;
  for (const SectionLayout& section : kSectionLayout)
    file.add(section.type, section.record_size, &(out.*section.payload));
  file.add(SectionType::kEnd, 0, nullptr);
  // Records point into these two by offset: one cut short would leave references dangling.
  // Any other section that ran out of memory keeps the whole records it got, as before.
  if (out.strings.failed() || out.histograms.failed()) {
    RawLine().append("out of memory while writing the profile of pid ").append(rt.pid).emit();
    errno = saved_errno;
    return false;
  }
  format::FileHeader& header = file.header;
  memcpy(header.magic, format::kMagic, sizeof(header.magic));
  header.version = format::kVersion;
  header.header_size = sizeof(header);
  header.file_size = file.size;
  header.section_count = file.sections;
  header.header_crc = crc32(0, &header, sizeof(format::FileHeader));

  char temporary[4200];
  const bool named = profile_path(path_out);
  const bool snapshot = exit_path == format::ExitPath::kSnapshot;
  if (!named || !temporary_path(rt, snapshot, temporary)) {
    RawLine()
        .append("profile of pid ")
        .append(rt.pid)
        .append(" not written: its directory's name is too long")
        .emit();
    errno = saved_errno;
    return false;
  }
  if (from_signal ? !rt.file_lock.try_lock_for(interrupted_lockscope ? 0 : 1000)
                  : (rt.file_lock.lock(), false)) {
    RawLine()
        .append("profile of pid ")
        .append(rt.pid)
        .append(" not written: the signal arrived while its file was being written")
        .emit();
    errno = saved_errno;
    return false;
  }
  if (snapshot && rt.profile_written.load(std::memory_order_acquire)) {  // the end came first
    rt.file_lock.unlock();
    errno = saved_errno;
    return false;
  }
  const int fd =
      open_at_descriptor_limit(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  // Readable whatever the program's umask (0777 left a file of mode 0 that lockscope, run by the
  // same user, could not open).
  if (fd >= 0) fchmod(fd, 0644);
  bool renamed = false;
  if (fd < 0 && (errno == EACCES || errno == EPERM)) {
    // The process gave up the right to create files here (nginx's workers become www-data): its
    // file, kept open since then, is written in place.
    renamed = write_kept_profile(rt, file);
  } else {
    const bool written = fd >= 0 && write_all(fd, file);
    const int write_errno = errno;
    if (fd >= 0) close(fd);
    renamed = written && rename(temporary, path_out) == 0;
    if (!written) errno = write_errno;
    // In a sticky directory (mode 1777) the file kept before giving up root is root's, and may
    // not be replaced by the user the process became: written in place instead.
    if (written && !renamed && (errno == EPERM || errno == EACCES) && rt.kept_profile_fd >= 0) {
      unlink(temporary);
      renamed = write_kept_profile(rt, file);
    }
  }
  rt.file_lock.unlock();
  if (!renamed) {
    RawLine()
        .append("cannot write profile ")
        .append(path_out)
        .append(": ")
        .append(strerror(errno))
        .emit();
    unlink(temporary);
    errno = saved_errno;
    return false;
  }
  if (rt.log_writes)
    RawLine()
        .append("profile of pid ")
        .append(rt.pid)
        .append(" written in ")
        .append((Clock::monotonic_ns() - began_ns) / 1000)
        .append(" us, ")
        .append(file.size)
        .append(" bytes, begun at ")
        .append(began_ns / 1000)
        .append(" us")
        .emit();
  errno = saved_errno;
  return true;
}

}  // namespace lockscope::runtime
