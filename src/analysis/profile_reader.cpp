#include "analysis/profile_reader.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string_view>

#include "analysis/hold_bounds.h"
#include "analysis/regular_file.h"
#include "analysis/trace_reader.h"
#include "common/crc32.h"

namespace lockscope {
namespace {

using format::SectionType;

// Names every section type (no default: a type without a name fails to compile, -Werror=switch).
constexpr const char* section_name(uint32_t type) {
  switch (static_cast<SectionType>(type)) {
    case SectionType::kStrings:
      return "strings";
    case SectionType::kProcess:
      return "process";
    case SectionType::kModules:
      return "modules";
    case SectionType::kThreads:
      return "threads";
    case SectionType::kLocks:
      return "locks";
    case SectionType::kSites:
      return "sites";
    case SectionType::kHistograms:
      return "histograms";
    case SectionType::kCounters:
      return "counters";
    case SectionType::kLockOrder:
      return "lock order";
    case SectionType::kBlame:
      return "blame";
    case SectionType::kCpuHandoffs:
      return "CPU handoffs";
    case SectionType::kStackFrames:
      return "stack frames";
    case SectionType::kStacks:
      return "stacks";
    case SectionType::kSiteStacks:
      return "site stacks";
    case SectionType::kOrderStacks:
      return "lock-order stacks";
    case SectionType::kBlameStacks:
      return "blame stacks";
    case SectionType::kSiteHoldStacks:
      return "hold stacks";
    case SectionType::kSiteAcquireStacks:
      return "acquire stacks";
    case SectionType::kThreadFacts:
      return "thread facts";
    case SectionType::kProcessFacts:
      return "process facts";
    case SectionType::kEnd:
      return "end";
  }
  return "unknown";
}
constexpr bool every_section_is_named() {
  for (uint32_t type = 1; type <= format::kSectionTypes; ++type)
    if (std::string_view(section_name(type)) == "unknown") return false;
  return std::string_view(section_name(format::kSectionTypes + 1)) == "unknown";
}
static_assert(every_section_is_named(), "SectionType::kLast must be the last section type");

struct BadFile : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Section {
  const unsigned char* data = nullptr;
  uint64_t count = 0;
};

// A section's records, read where they lie in the file (copied one at a time: the file's
// sections start at any offset), so that decoding holds the file once, not twice.
template <typename Record>
class Records {
 public:
  Records() = default;
  Records(const unsigned char* data, size_t count) : data_(data), count_(count) {}
  size_t size() const { return count_; }
  Record operator[](size_t i) const {
    Record record;
    std::memcpy(&record, data_ + i * sizeof(Record), sizeof(Record));
    return record;
  }
  class iterator {
   public:
    iterator(const Records* records, size_t i) : records_(records), i_(i) {}
    Record operator*() const { return (*records_)[i_]; }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const iterator& other) const { return i_ != other.i_; }

   private:
    const Records* records_;
    size_t i_;
  };
  iterator begin() const { return iterator(this, 0); }
  iterator end() const { return iterator(this, count_); }

 private:
  const unsigned char* data_ = nullptr;
  size_t count_ = 0;
};

// What the references into one shared section (histogram bins, stack frames, string bytes) may
// claim in all: the runtime gives every histogram, stack and string a run of its own, so
// references that together claim more than the section holds overlap, and the file is damaged.
// Without this bound each of N references could claim the whole section: N times its size in
// time and memory (a 4.6 MB file took 16 s).
class ReferenceBudget {
 public:
  ReferenceBudget(uint64_t available, const char* what) : left_(available), what_(what) {}
  void take(uint64_t count) {
    if (count > left_)
      throw BadFile(
          fmt::format("{} overlap (together they claim more than the section holds)", what_));
    left_ -= count;
  }

 private:
  uint64_t left_;
  const char* what_;
};

// Checked views over the validated sections.
class SectionSet {
 public:
  SectionSet(const std::string& bytes) : bytes_(bytes) {}

  void parse() {
    // Empty: a process that gave up root kept its file open from then on, to write at its end
    // (interpose_credentials.cpp), and ended without it.
    if (bytes_.empty())
      throw BadFile("empty: the process ended without writing its profile (killed by SIGKILL?)");
    if (bytes_.size() < sizeof(format::FileHeader))
      throw BadFile(
          fmt::format("truncated: {} bytes, shorter than the file header", bytes_.size()));
    format::FileHeader header;
    std::memcpy(&header, bytes_.data(), sizeof(header));
    if (std::memcmp(header.magic, format::kMagic, sizeof(header.magic)) != 0)
      throw BadFile("not a lockscope profile (bad magic)");
    if (header.version > format::kVersion)
      throw BadFile(
          fmt::format("written by a newer lockscope (format version {}; this one reads up "
                      "to {})",
                      header.version, format::kVersion));
    if (header.version < format::kOldestReadableVersion)
      throw BadFile(
          fmt::format("written by an older lockscope (format version {}; this one reads "
                      "versions {} to {}): record it again",
                      header.version, format::kOldestReadableVersion, format::kVersion));
    version_ = header.version;
    if (header.header_size != sizeof(format::FileHeader))
      throw BadFile(fmt::format("unsupported header size {}", header.header_size));
    const uint32_t stored_crc = header.header_crc;
    header.header_crc = 0;
    if (crc32(0, &header, sizeof(header)) != stored_crc)
      throw BadFile("corrupt file header (checksum mismatch)");
    if (header.file_size != bytes_.size())
      throw BadFile(
          header.file_size > bytes_.size()
              ? fmt::format("truncated: {} of {} bytes", bytes_.size(), header.file_size)
              : fmt::format("{} bytes, but its header says {}", bytes_.size(), header.file_size));
    size_t at = sizeof(format::FileHeader);
    bool ended = false;
    for (uint32_t i = 0; i < header.section_count && !ended; ++i) {
      if (at + sizeof(format::SectionHeader) > bytes_.size())
        throw BadFile(fmt::format("truncated in section {} of {}", i + 1, header.section_count));
      format::SectionHeader section;
      std::memcpy(&section, bytes_.data() + at, sizeof(section));
      at += sizeof(section);
      // A type this reader does not know (a newer lockscope's) is checked like any other, then
      // skipped and counted: a damaged known section fails its checksum or the missing-section
      // test instead.
      const std::string unknown_name = fmt::format("type {}", section.type);
      const bool known = std::string_view(section_name(section.type)) != "unknown";
      const char* name = known ? section_name(section.type) : unknown_name.c_str();
      if (section.payload_size > bytes_.size() - at)
        throw BadFile(fmt::format("section '{}' runs past the end of the file", name));
      const auto* payload = reinterpret_cast<const unsigned char*>(bytes_.data() + at);
      if (crc32(0, payload, section.payload_size) != section.payload_crc)
        throw BadFile(fmt::format("section '{}' is corrupt (checksum mismatch)", name));
      const bool is_end = section.type == static_cast<uint32_t>(SectionType::kEnd);
      if (is_end
              ? section.payload_size != 0 || section.record_size != 0 || section.record_count != 0
              : section.record_size == 0 || section.payload_size % section.record_size != 0 ||
                    section.record_count != section.payload_size / section.record_size)
        throw BadFile(fmt::format("section '{}' has inconsistent sizes", name));
      at += section.payload_size;
      if (section.type == static_cast<uint32_t>(SectionType::kEnd)) {
        ended = true;
        continue;
      }
      if (!known) {
        ++unknown_sections_;
        continue;
      }
      if (!sections_.emplace(section.type, Section{payload, section.record_count}).second)
        throw BadFile(fmt::format("section '{}' appears twice", name));
      record_sizes_[section.type] = section.record_size;
    }
    if (!ended) throw BadFile("no end-of-profile section (incomplete file)");
    auto strings = sections_.find(static_cast<uint32_t>(SectionType::kStrings));
    string_bytes_ = ReferenceBudget(strings == sections_.end() ? 0 : strings->second.count,
                                    "string references");
  }

  uint32_t version() const { return version_; }

  // The NUL-terminated strings that follow the one at `offset_plus_one` (version 4's exec target):
  // fewer than `count` when the section ends first.
  std::vector<std::string> c_strings(uint32_t offset_plus_one, size_t count) const {
    std::vector<std::string> out;
    uint64_t at = offset_plus_one;
    auto it = sections_.find(static_cast<uint32_t>(SectionType::kStrings));
    while (out.size() < count && it != sections_.end() && at >= 1 && at <= it->second.count) {
      const char* begin = reinterpret_cast<const char*>(it->second.data) + at - 1;
      if (!std::memchr(begin, '\0', it->second.count - (at - 1))) break;
      out.push_back(c_string(static_cast<uint32_t>(at)));
      at += out.back().size() + 1;
    }
    return out;
  }

  // Sections of types this reader does not know, skipped.
  uint32_t unknown_sections() const { return unknown_sections_; }

  template <typename Record>
  Records<Record> records(SectionType type, bool required = true) const {
    const auto key = static_cast<uint32_t>(type);
    auto it = sections_.find(key);
    if (it == sections_.end()) {
      if (required) throw BadFile(fmt::format("missing section '{}'", section_name(key)));
      return {};
    }
    if (record_sizes_.at(key) != sizeof(Record))
      throw BadFile(fmt::format("section '{}' has records of {} bytes, expected {}",
                                section_name(key), record_sizes_.at(key), sizeof(Record)));
    return Records<Record>(it->second.data, it->second.count);
  }

  // A NUL-terminated string at `offset` of the strings section (the reference's offset + 1).
  std::string c_string(uint32_t offset_plus_one) const {
    auto it = sections_.find(static_cast<uint32_t>(SectionType::kStrings));
    if (it == sections_.end() || offset_plus_one == 0 || offset_plus_one > it->second.count)
      throw BadFile("a string reference points outside the strings section");
    const char* begin = reinterpret_cast<const char*>(it->second.data) + offset_plus_one - 1;
    const char* end = static_cast<const char*>(
        std::memchr(begin, '\0', it->second.count - (offset_plus_one - 1)));
    if (!end) throw BadFile("a string runs past the end of the strings section");
    string_bytes_.take(static_cast<uint64_t>(end - begin) + 1);
    return std::string(begin, end);
  }

  std::string string(format::StringRef ref) const {
    auto it = sections_.find(static_cast<uint32_t>(SectionType::kStrings));
    if (it == sections_.end() || uint64_t{ref.offset} + ref.length > it->second.count)
      throw BadFile("a string reference points outside the strings section");
    string_bytes_.take(ref.length);
    return std::string(reinterpret_cast<const char*>(it->second.data) + ref.offset, ref.length);
  }

 private:
  const std::string& bytes_;
  // The strings section's bytes, not the file's: parse() sets it.
  mutable ReferenceBudget string_bytes_{0, "string references"};
  std::map<uint32_t, Section> sections_;
  std::map<uint32_t, uint32_t> record_sizes_;
  uint32_t unknown_sections_ = 0;
  uint32_t version_ = 0;
};

// The bins of the histograms section, each for one histogram reference at most.
class HistogramBins {
 public:
  explicit HistogramBins(Records<format::HistogramBin> bins)
      : bins_(bins), budget_(bins.size(), "histogram references") {}

  LatencyHistogram histogram(format::HistogramRef ref) {
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

 private:
  Records<format::HistogramBin> bins_;
  ReferenceBudget budget_;
};

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

// The threads' lifetimes, CPU times and policies, and the process's CPUs (optional sections: a
// file without them, or a thread without a record, leaves them not known).
void decode_facts(const SectionSet& file, ProcessProfile& out) {
  std::vector<bool> seen(out.threads.size());
  for (const auto& f : file.records<format::ThreadFactsRecord>(SectionType::kThreadFacts, false)) {
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
  const auto process = file.records<format::ProcessFactsRecord>(SectionType::kProcessFacts, false);
  if (process.size() > 1) throw BadFile("the process facts section must hold one record at most");
  if (process.size() == 1) out.online_cpus = process[0].online_cpus;
}

ProcessProfile decode(const SectionSet& file) {
  ProcessProfile out;
  const auto process = file.records<format::ProcessRecord>(SectionType::kProcess);
  if (process.size() != 1) throw BadFile("the process section must hold exactly one record");
  const auto& p = process[0];
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

  for (const auto& m : file.records<format::ModuleRecord>(SectionType::kModules))
    out.modules.push_back(ModuleSummary{file.string(m.path), hex(m.build_id, m.build_id_size),
                                        m.load_bias, m.start, m.end});
  HistogramBins bins(file.records<format::HistogramBin>(SectionType::kHistograms));
  for (const auto& t : file.records<format::ThreadRecord>(SectionType::kThreads)) {
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
  for (const auto& l : file.records<format::LockRecord>(SectionType::kLocks)) {
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
  std::vector<std::pair<size_t, size_t>> site_place;  // site record -> (lock, its position there)
  for (const auto& s : file.records<format::SiteRecord>(SectionType::kSites)) {
    if (s.lock_index >= out.locks.size()) throw BadFile("a call site refers to a missing lock");
    if (s.operation < 1 || s.operation > static_cast<uint16_t>(format::Operation::kLast))
      throw BadFile("a call site has an unknown operation");
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
    site_place.push_back({s.lock_index, out.locks[s.lock_index].sites.size()});
    out.locks[s.lock_index].sites.push_back(std::move(site));
  }
  // Version 3: whom contended acquisitions waited behind (none in a version 2 file).
  std::vector<std::pair<size_t, size_t>> blame_place;  // record -> (site record, row)
  for (const auto& b : file.records<format::BlameRecord>(SectionType::kBlame, false)) {
    if (b.site >= site_place.size()) throw BadFile("a blame record refers to a missing call site");
    const auto [lock, position] = site_place[b.site];
    auto& rows = out.locks[lock].sites[position].blame;
    blame_place.emplace_back(b.site, rows.size());
    rows.push_back(
        Blame{location(b.holder_module, b.holder_offset, out.modules.size()), b.waits, b.wait_ns});
  }
  const auto frames = file.records<format::StackFrameRecord>(SectionType::kStackFrames, false);
  ReferenceBudget frame_budget(frames.size(), "stack frame references");
  for (const auto& s : file.records<format::StackRecord>(SectionType::kStacks, false)) {
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
  for (const auto& s : file.records<format::SiteStackRecord>(SectionType::kSiteStacks, false)) {
    if (s.site >= site_place.size() || s.stack >= out.stacks.size())
      throw BadFile("a site stack refers to a missing call site or stack");
    out.locks[site_place[s.site].first].sites[site_place[s.site].second].stacks.push_back(
        SiteStack{s.stack, s.waits, s.wait_ns});
  }
  for (const auto& s :
       file.records<format::SiteHoldStackRecord>(SectionType::kSiteHoldStacks, false)) {
    if (s.site >= site_place.size() || s.stack >= out.stacks.size())
      throw BadFile("a hold stack refers to a missing call site or stack");
    out.locks[site_place[s.site].first].sites[site_place[s.site].second].hold_stacks.push_back(
        HoldStack{s.stack, s.waits, std::min(s.wait_ns, out.duration_ns)});
  }
  for (const auto& s :
       file.records<format::SiteAcquireStackRecord>(SectionType::kSiteAcquireStacks, false)) {
    if (s.site >= site_place.size() || s.stack >= out.stacks.size())
      throw BadFile("an acquire stack refers to a missing call site or stack");
    out.locks[site_place[s.site].first].sites[site_place[s.site].second].acquire_stacks.push_back(
        SiteStack{s.stack, s.waits, 0});
  }
  // A site's last sample stands for holds that never came (the run ended first): the runtime
  // takes them out of that sample's row (SiteDetail::last_sample_stack); in a profile of an
  // earlier runtime, where the weights overrun the site's own figures, its stacks are scaled down
  // to them, so that hold time by stack never adds up to more than the site's estimate.
  for (LockSummary& lock : out.locks)
    for (SiteSummary& site : lock.sites) {
      uint64_t holds = 0, hold_ns = 0;
      for (const HoldStack& row : site.hold_stacks) {
        holds += row.holds;
        hold_ns += row.hold_ns;
      }
      const double by_count =
          holds > site.acquisitions() ? double(site.acquisitions()) / double(holds) : 1.0;
      const double by_time =
          hold_ns > site.hold_sum_ns ? double(site.hold_sum_ns) / double(hold_ns) : 1.0;
      if (by_count == 1.0 && by_time == 1.0) continue;
      for (HoldStack& row : site.hold_stacks) {
        row.holds = static_cast<uint64_t>(double(row.holds) * by_count);
        row.hold_ns = static_cast<uint64_t>(double(row.hold_ns) * by_time);
      }
    }
  for (const auto& b : file.records<format::BlameStackRecord>(SectionType::kBlameStacks, false)) {
    const auto valid = [&](uint32_t stack) {
      return stack == format::kNoStack || stack < out.stacks.size();
    };
    if (b.blame >= blame_place.size() || !valid(b.waiter_stack) || !valid(b.holder_stack))
      throw BadFile("a blame stack record refers to a missing blame record or stack");
    const auto [site, row] = blame_place[b.blame];
    Blame& blame = out.locks[site_place[site].first].sites[site_place[site].second].blame[row];
    if (b.waiter_stack != format::kNoStack) blame.waiter_stack = b.waiter_stack;
    if (b.holder_stack != format::kNoStack) blame.holder_stack = b.holder_stack;
    blame.holder_stack_at_acquire = (b.flags & format::kBlameHolderStackAtAcquire) != 0;
  }
  for (const auto& h : file.records<format::CpuHandoffRecord>(SectionType::kCpuHandoffs, false)) {
    if (h.site >= site_place.size())
      throw BadFile("a CPU handoff record refers to a missing call site");
    SiteSummary& site = out.locks[site_place[h.site].first].sites[site_place[h.site].second];
    site.cross_cpu_handoffs = h.cross_cpu;
    site.same_cpu_handoffs = h.same_cpu;
  }
  for (LockSummary& lock : out.locks) {
    lock.finish();
    cap_lock_holds(lock, out.duration_ns, out.threads.size());
  }
  // Version 3: lock order (a version 2 file has none: it was not recorded).
  for (const auto& e : file.records<format::LockOrderRecord>(SectionType::kLockOrder, false)) {
    if (e.from_lock >= out.locks.size() || e.to_lock >= out.locks.size())
      throw BadFile("a lock-order edge refers to a missing lock");
    if (e.to_operation < 1 || e.to_operation > static_cast<uint16_t>(format::Operation::kLast))
      throw BadFile("a lock-order edge has an unknown operation");
    LockOrderEdge edge;
    edge.from_lock = e.from_lock;
    edge.to_lock = e.to_lock;
    edge.from_site = location(e.from_module, e.from_offset, out.modules.size());
    edge.to_site = location(e.to_module, e.to_offset, out.modules.size());
    edge.tid = e.tid;
    edge.to_operation = static_cast<format::Operation>(e.to_operation);
    if (e.from_operation > static_cast<uint16_t>(format::Operation::kLast))
      throw BadFile("a lock-order edge has an unknown operation");
    if (e.from_operation) edge.from_operation = static_cast<format::Operation>(e.from_operation);
    out.lock_order.push_back(std::move(edge));
  }
  for (const auto& s : file.records<format::OrderStackRecord>(SectionType::kOrderStacks, false)) {
    if (s.edge >= out.lock_order.size() || s.stack >= out.stacks.size())
      throw BadFile("a lock-order stack refers to a missing edge or stack");
    out.lock_order[s.edge].stack = s.stack;
  }
  decode_facts(file, out);
  out.unknown_sections = file.unknown_sections();
  for (const auto& c : file.records<format::CounterRecord>(SectionType::kCounters, false))
    out.counters[static_cast<format::Counter>(c.id)] += c.value;
  return out;
}

}  // namespace

std::variant<ProcessProfile, std::string> read_profile_file(const std::string& path) {
  try {
    RegularFile in;
    if (std::string problem = in.open(path); !problem.empty()) return problem;
    if (in.size() > kMaxProfileFileBytes)
      return fmt::format("{} bytes, more than a profile can be ({}): not a profile, or damaged",
                         in.size(), byte_size_text(kMaxProfileFileBytes));
    std::string bytes;
    if (std::string problem = in.read_all(bytes); !problem.empty()) return problem;
    SectionSet sections(bytes);
    sections.parse();
    ProcessProfile process = decode(sections);
    process.file = path;
    return process;
  } catch (const BadFile& problem) {
    return std::string(problem.what());
  } catch (const std::exception& problem) {  // e.g. an allocation a damaged count asked for
    return fmt::format("unreadable ({})", problem.what());
  }
}

Profile read_profile_directory(const std::string& directory) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::is_directory(directory, error))
    throw std::runtime_error(
        fmt::format("'{}' is not a profile directory ({})", directory,
                    fs::exists(directory) ? "not a directory" : "no such file or directory"));
  Profile profile;
  profile.directory = directory;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(directory, error))
    if (entry.path().extension() == format::kFileSuffix) files.push_back(entry.path());
  if (error)
    throw std::runtime_error(fmt::format("cannot list '{}': {}", directory, error.message()));
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    auto result = read_profile_file(file.string());
    if (auto* process = std::get_if<ProcessProfile>(&result))
      profile.processes.push_back(std::move(*process));
    else
      profile.problems.push_back(ProfileProblem{file.string(), std::get<std::string>(result)});
  }
  std::stable_sort(profile.processes.begin(), profile.processes.end(),
                   [](const ProcessProfile& a, const ProcessProfile& b) {
                     return a.start_realtime_ns < b.start_realtime_ns;
                   });
  attach_traces(profile, directory);
  return profile;
}

}  // namespace lockscope
