// The lock-side sections of the profile: the locks, their call sites and what hangs off a site
// (blame, call-stack rows, CPU handoffs), the lock-order edges, and the call stacks they all
// refer to (profile_section_writers.h).
#include <string.h>

#include <utility>

#include "runtime/module_map.h"
#include "runtime/profile_section_writers.h"
#include "runtime/runtime_state.h"

namespace lockscope::runtime {
namespace {

using format::SectionType;

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

// kLocks: the live slots' locks, then the retired ones, each numbered in `index`.
void encode_locks(SectionBuffers& out, Runtime& rt, const ModuleList& modules, size_t live,
                  LockIndex& index, uint32_t& next) {
  LockTable& locks = rt.locks;
  for (size_t i = 0; i < live; ++i) {
    const auto s = static_cast<uint32_t>(i);
    LockSlot& slot = locks.slot(s);
    const uint32_t generation = slot.generation.load(std::memory_order_relaxed);
    // A destroyed lock's next generation, never initialised nor used, is not a lock at all.
    if (generation > 0 && !slot.used.load(std::memory_order_relaxed) &&
        slot.init_site.load(std::memory_order_relaxed) == 0)
      continue;
    out.append<SectionType::kLocks>(lock_record(
        modules, slot.address.load(std::memory_order_relaxed), generation,
        slot.primitive.load(std::memory_order_relaxed), slot.kind.load(std::memory_order_relaxed),
        slot.flags.load(std::memory_order_relaxed), slot.capacity.load(std::memory_order_relaxed),
        slot.init_site.load(std::memory_order_relaxed)));
    index.put(s, generation, next++);
  }
  for (size_t i = 0; i < locks.retired_count(); ++i) {
    const RetiredLock& r = locks.retired(i);
    out.append<SectionType::kLocks>(lock_record(modules, r.address, r.generation, r.primitive,
                                                r.kind, r.flags, r.capacity, r.init_site));
    index.put(r.slot, r.generation, next++);
  }
}

// kBlame and kBlameStacks: whom the waits of site `site_number` waited behind.
void encode_blame(SectionBuffers& out, Runtime& rt, const ModuleList& modules, SiteTable& all,
                  const SiteDetail& detail, uint32_t site_number) {
  for (const BlameRow* row = detail.blame; row; row = row->next) {
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
      out.append<SectionType::kBlameStacks>(format::BlameStackRecord{
          out.count<SectionType::kBlame>(),
          row->key.waiter_stack != 0 ? row->key.waiter_stack - 1 : format::kNoStack,
          holder_stack != 0 ? holder_stack - 1 : format::kNoStack,
          row->key.holder_stack & kHolderStackAtAcquire ? format::kBlameHolderStackAtAcquire : 0u});
    out.append<SectionType::kBlame>(blame);
  }
}

// kSiteStacks, kSiteHoldStacks, kSiteAcquireStacks: one record layout (SiteStackRecord), a
// section each.
void encode_site_stack_rows(SectionBuffers& out, const SiteDetail& detail, uint32_t site_number) {
  for (const auto& [rows, section] :
       {std::pair{detail.stacks, &out.payload<SectionType::kSiteStacks>()},
        std::pair{detail.hold_stacks, &out.payload<SectionType::kSiteHoldStacks>()},
        std::pair{detail.acquire_stacks, &out.payload<SectionType::kSiteAcquireStacks>()}})
    for (const StackRow* row = rows; row; row = row->next)
      section->append_record(
          format::SiteStackRecord{site_number, row->stack - 1, row->waits, row->wait_ns});
}

// kSites, and per site its histograms, blame, stack rows and CPU handoffs. A site whose lock has
// no record (its retired record was dropped) gets one, its identity kept.
void encode_sites(SectionBuffers& out, Runtime& rt, const ModuleList& modules, SiteTable& all,
                  LockIndex& index, uint32_t& next) {
  ByteBuffer& lock_records = out.payload<SectionType::kLocks>();
  for (size_t i = 0; i < all.used(); ++i) {
    const SiteStats& site = all.inserted(i);
    uint32_t lock = index.get(site.key.lock_slot, site.key.generation);
    if (lock == format::kNoModule) {  // its retired record was dropped: keep the identity
      const LockSlot& slot = rt.locks.slot(site.key.lock_slot);
      const uint32_t primitive = static_cast<uint32_t>(
          format::operation_primitive(static_cast<format::Operation>(site.key.operation)));
      out.append<SectionType::kLocks>(lock_record(modules,
                                                  slot.address.load(std::memory_order_relaxed),
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
    if (owner_changes != 0 && !lock_records.failed() &&
        (lock + 1) * sizeof(format::LockRecord) <= lock_records.size())  // a lock's: its sites' sum
      reinterpret_cast<format::LockRecord*>(lock_records.data())[lock].owner_changes +=
          owner_changes;
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
      const uint32_t site_number = out.count<SectionType::kSites>();
      encode_blame(out, rt, modules, all, *detail, site_number);
      encode_site_stack_rows(out, *detail, site_number);
      if (detail->cross_cpu || detail->same_cpu)
        out.append<SectionType::kCpuHandoffs>(
            format::CpuHandoffRecord{site_number, 0, detail->cross_cpu, detail->same_cpu});
    } else {
      record.wait_histogram = record.hold_histogram = out.next_histogram();
    }
    out.append<SectionType::kSites>(record);
  }
}

// kLockOrder and kOrderStacks.
void encode_lock_order(SectionBuffers& out, Runtime& rt, const ModuleList& modules, SiteTable& all,
                       const LockIndex& index) {
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
        out.append<SectionType::kOrderStacks>(
            format::OrderStackRecord{out.count<SectionType::kLockOrder>(), stack - 1});
    out.append<SectionType::kLockOrder>(record);
  }
}

// kStacks and kStackFrames: every stack of `all`'s store, numbered as the sections above refer
// to them (a stack number - 1).
void encode_stacks(SectionBuffers& out, const ModuleList& modules, const SiteTable& all) {
  const StackStore& stacks = all.stacks();
  for (uint32_t n = 1; n <= stacks.size(); ++n) {
    format::StackRecord record{out.count<SectionType::kStackFrames>(), stacks.depth(n)};
    for (uint32_t i = 0; i < record.frame_count; ++i) {
      format::StackFrameRecord frame{};
      split_site(modules, stacks.frame(n, i), frame.module, frame.offset);
      out.append<SectionType::kStackFrames>(frame);
    }
    out.append<SectionType::kStacks>(record);
  }
}

}  // namespace

void encode_lock_sections(SectionBuffers& out, Runtime& rt, const ModuleList& modules,
                          SiteTable& all) {
  LockTable& locks = rt.locks;
  LockIndex index;
  const size_t live = locks.size();  // read once: the index is sized for these
  if (!index.create(live + locks.retired_count() + 16)) return;
  // Sized once (a hint, which fails nothing when refused; they grow when short): a doubling
  // buffer copies what it holds each time.
  out.payload<SectionType::kLocks>().reserve_hint((live + locks.retired_count()) *
                                                  sizeof(format::LockRecord));
  out.payload<SectionType::kSites>().reserve_hint(all.used() * sizeof(format::SiteRecord));
  uint32_t next = 0;  // the next lock record's number
  encode_locks(out, rt, modules, live, index, next);
  encode_sites(out, rt, modules, all, index, next);
  encode_lock_order(out, rt, modules, all, index);
  encode_stacks(out, modules, all);
}

}  // namespace lockscope::runtime
