// Builds profile files field by field, the way the runtime's writer lays them out
// (docs/profile-format.md): for tests of the reader and of `lockscope report` on files no real
// run would write (damaged, adversarial, at the runtime's limits).
#pragma once

#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "common/crc32.h"
#include "common/profile_format.h"

namespace lockscope {
namespace profile_file_builder {

using namespace format;

class ProfileFileBuilder {
 public:
  StringRef add_string(const std::string& text) {
    StringRef ref{static_cast<uint32_t>(strings_.size()), static_cast<uint32_t>(text.size())};
    strings_ += text;
    return ref;
  }
  HistogramRef add_histogram(std::initializer_list<std::pair<uint32_t, uint64_t>> bins) {
    return add_histogram(std::vector<std::pair<uint32_t, uint64_t>>(bins));
  }
  HistogramRef add_histogram(const std::vector<std::pair<uint32_t, uint64_t>>& bins) {
    HistogramRef ref{static_cast<uint32_t>(bins_.size()), static_cast<uint32_t>(bins.size())};
    for (auto [bucket, count] : bins) bins_.push_back(HistogramBin{bucket, 0, count});
    return ref;
  }
  template <typename Record>
  void add(std::vector<Record>& into, const Record& record) {
    into.push_back(record);
  }

  std::vector<ProcessRecord> process;
  std::vector<ModuleRecord> modules;
  std::vector<ThreadRecord> threads;
  std::vector<LockRecord> locks;
  std::vector<SiteRecord> sites;
  std::vector<CounterRecord> counters;
  std::vector<LockOrderRecord> order;    // written only when not empty (as in a version 2 file)
  std::vector<StackFrameRecord> frames;  // (these two also)
  std::vector<StackRecord> stacks;
  uint32_t version = kVersion;
  bool with_counters = true;  // false: no counters section at all (it is optional)
  // Sections of any type, written after the others (before kEnd): {type, record size, payload}.
  struct RawSection {
    uint32_t type;
    uint32_t record_size;
    std::string payload;
  };
  std::vector<RawSection> extra_sections;

  std::string bytes() const {
    std::string body;
    uint32_t sections = 0;
    auto section = [&](SectionType type, uint32_t record_size, const void* data, size_t size) {
      SectionHeader header{static_cast<uint32_t>(type),
                           record_size,
                           record_size ? size / record_size : 0,
                           size,
                           crc32(0, data, size),
                           0};
      body.append(reinterpret_cast<const char*>(&header), sizeof(header));
      body.append(static_cast<const char*>(data), size);
      ++sections;
    };
    auto records = [&](SectionType type, const auto& list) {
      using Record = typename std::decay_t<decltype(list)>::value_type;
      section(type, sizeof(Record), list.data(), list.size() * sizeof(Record));
    };
    section(SectionType::kStrings, 1, strings_.data(), strings_.size());
    records(SectionType::kProcess, process);
    records(SectionType::kModules, modules);
    records(SectionType::kThreads, threads);
    records(SectionType::kLocks, locks);
    records(SectionType::kSites, sites);
    records(SectionType::kHistograms, bins_);
    if (with_counters) records(SectionType::kCounters, counters);
    if (!order.empty()) records(SectionType::kLockOrder, order);
    if (!frames.empty()) records(SectionType::kStackFrames, frames);
    if (!stacks.empty()) records(SectionType::kStacks, stacks);
    for (const RawSection& extra : extra_sections)
      section(static_cast<SectionType>(extra.type), extra.record_size, extra.payload.data(),
              extra.payload.size());
    section(SectionType::kEnd, 0, "", 0);
    FileHeader header{};
    std::memcpy(header.magic, kMagic, sizeof(kMagic));
    header.version = version;
    header.header_size = sizeof(FileHeader);
    header.file_size = sizeof(FileHeader) + body.size();
    header.section_count = sections;
    header.header_crc = crc32(0, &header, sizeof(header));
    return std::string(reinterpret_cast<const char*>(&header), sizeof(header)) + body;
  }

 private:
  std::string strings_;
  std::vector<HistogramBin> bins_;
};

}  // namespace profile_file_builder

using profile_file_builder::ProfileFileBuilder;

}  // namespace lockscope
