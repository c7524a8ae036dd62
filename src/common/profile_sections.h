// The profile's sections, described once for both ends: for each SectionType, the record it holds,
// the name readers give it in their messages, the format version that introduced it, and whether
// a reader refuses a file without it. The runtime's writer writes one section per row of
// kSectionSpecs, in this order, with the row's record size (runtime/profile_section_writers.h);
// the reader names sections, checks their record sizes and refuses a missing required one from the
// same rows (analysis/profile_section_set.h). The records themselves are in profile_format.h.
//
// A new section type: its record in profile_format.h, a SectionRecord specialisation and a row
// here (the static_asserts below fail until both exist), then an encoder in the writer and a
// decoder in the reader. A required section must exist since kOldestReadableVersion: an older file
// without it would otherwise be refused.
//
// Freestanding as the runtime needs it: no library headers beyond profile_format.h's.
#pragma once

#include "common/profile_format.h"

namespace lockscope::format {

// The record type of section T: SectionRecord<T>::type.
template <SectionType T>
struct SectionRecord;
template <typename Record>
struct RecordIs {
  using type = Record;
};
// kStrings holds bytes: its records are the strings' characters, referenced by StringRef.
template <>
struct SectionRecord<SectionType::kStrings> : RecordIs<char> {};
template <>
struct SectionRecord<SectionType::kProcess> : RecordIs<ProcessRecord> {};
template <>
struct SectionRecord<SectionType::kModules> : RecordIs<ModuleRecord> {};
template <>
struct SectionRecord<SectionType::kThreads> : RecordIs<ThreadRecord> {};
template <>
struct SectionRecord<SectionType::kLocks> : RecordIs<LockRecord> {};
template <>
struct SectionRecord<SectionType::kSites> : RecordIs<SiteRecord> {};
template <>
struct SectionRecord<SectionType::kHistograms> : RecordIs<HistogramBin> {};
template <>
struct SectionRecord<SectionType::kCounters> : RecordIs<CounterRecord> {};
template <>
struct SectionRecord<SectionType::kLockOrder> : RecordIs<LockOrderRecord> {};
template <>
struct SectionRecord<SectionType::kBlame> : RecordIs<BlameRecord> {};
template <>
struct SectionRecord<SectionType::kCpuHandoffs> : RecordIs<CpuHandoffRecord> {};
template <>
struct SectionRecord<SectionType::kStackFrames> : RecordIs<StackFrameRecord> {};
template <>
struct SectionRecord<SectionType::kStacks> : RecordIs<StackRecord> {};
template <>
struct SectionRecord<SectionType::kSiteStacks> : RecordIs<SiteStackRecord> {};
template <>
struct SectionRecord<SectionType::kOrderStacks> : RecordIs<OrderStackRecord> {};
template <>
struct SectionRecord<SectionType::kBlameStacks> : RecordIs<BlameStackRecord> {};
template <>
struct SectionRecord<SectionType::kSiteHoldStacks> : RecordIs<SiteHoldStackRecord> {};
template <>
struct SectionRecord<SectionType::kSiteAcquireStacks> : RecordIs<SiteAcquireStackRecord> {};
template <>
struct SectionRecord<SectionType::kThreadFacts> : RecordIs<ThreadFactsRecord> {};
template <>
struct SectionRecord<SectionType::kProcessFacts> : RecordIs<ProcessFactsRecord> {};
template <SectionType T>
using SectionRecordOf = typename SectionRecord<T>::type;

struct SectionSpec {
  SectionType type;
  const char* name;        // in readers' messages: "section 'NAME' is corrupt (checksum mismatch)"
  uint32_t record_size;    // SectionHeader::record_size: sizeof(SectionRecordOf<type>)
  uint32_t since_version;  // the first format version whose files hold it
  bool required;           // a reader refuses a file without it ("missing section 'NAME'")
};

template <SectionType T>
constexpr SectionSpec section_spec(const char* name, uint32_t since_version, bool required) {
  return SectionSpec{T, name, sizeof(SectionRecordOf<T>), since_version, required};
}

inline constexpr bool kRequired = true;
inline constexpr bool kOptional = false;  // a file without it has none of what it holds

// Every section type, in type order (the order the writer writes them in). kStrings is required
// in effect: every file refers to strings (its executable), and a reader finds the section
// missing at that first reference ("a string reference points outside the strings section").
// kCounters has been written since version 2, but a file without it reads with every counter 0.
inline constexpr SectionSpec kSectionSpecs[] = {
    section_spec<SectionType::kStrings>("strings", 2, kRequired),
    section_spec<SectionType::kProcess>("process", 2, kRequired),  // exactly one record
    section_spec<SectionType::kModules>("modules", 2, kRequired),
    section_spec<SectionType::kThreads>("threads", 2, kRequired),
    section_spec<SectionType::kLocks>("locks", 2, kRequired),
    section_spec<SectionType::kSites>("sites", 2, kRequired),
    section_spec<SectionType::kHistograms>("histograms", 2, kRequired),
    section_spec<SectionType::kCounters>("counters", 2, kOptional),
    section_spec<SectionType::kLockOrder>("lock order", 3, kOptional),
    section_spec<SectionType::kBlame>("blame", 3, kOptional),
    section_spec<SectionType::kCpuHandoffs>("CPU handoffs", 3, kOptional),
    section_spec<SectionType::kStackFrames>("stack frames", 3, kOptional),
    section_spec<SectionType::kStacks>("stacks", 3, kOptional),
    section_spec<SectionType::kSiteStacks>("site stacks", 3, kOptional),
    section_spec<SectionType::kOrderStacks>("lock-order stacks", 3, kOptional),
    section_spec<SectionType::kBlameStacks>("blame stacks", 3, kOptional),
    section_spec<SectionType::kSiteHoldStacks>("hold stacks", 3, kOptional),
    section_spec<SectionType::kSiteAcquireStacks>("acquire stacks", 3, kOptional),
    section_spec<SectionType::kThreadFacts>("thread facts", 4,
                                            kOptional),  // one per thread at most
    section_spec<SectionType::kProcessFacts>("process facts", 4, kOptional),  // one record at most
};
static_assert(lists_each_value_in_order<SectionType>(kSectionSpecs, &SectionSpec::type),
              "one row per SectionType 1..kLast, in order");

// The last section of every file: no records (record size 0), its type kEnd.
inline constexpr SectionSpec kEndSectionSpec{SectionType::kEnd, "end", 0, 2, kRequired};

constexpr bool required_sections_exist_in_every_readable_version() {
  for (const SectionSpec& spec : kSectionSpecs)
    if (spec.since_version < kOldestReadableVersion || spec.since_version > kVersion ||
        (spec.required && spec.since_version != kOldestReadableVersion))
      return false;
  return true;
}
static_assert(required_sections_exist_in_every_readable_version(),
              "a section required of files its version predates would refuse them");

// The row of a section type, or nullptr for kEnd and for types this lockscope does not know (a
// newer one's, which readers skip).
constexpr const SectionSpec* find_section_spec(uint32_t type) {
  return type >= 1 && type <= kSectionTypes ? &kSectionSpecs[type - 1] : nullptr;
}
template <SectionType T>
constexpr const SectionSpec& section_spec_of() {
  static_assert(T != SectionType::kEnd && static_cast<uint32_t>(T) <= kSectionTypes);
  return kSectionSpecs[static_cast<uint32_t>(T) - 1];
}

}  // namespace lockscope::format
