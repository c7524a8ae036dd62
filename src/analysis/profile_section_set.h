// One profile file's sections, validated before any record is decoded: the header (magic,
// version, size, checksum), then each section's checksum and sizes, against the section table of
// common/profile_sections.h (names, record sizes, which sections are required). A section of a
// type this reader does not know (a newer lockscope's) is checked the same way, then skipped and
// counted. Every problem is a BadFile whose message names it ("section 'sites' is corrupt
// (checksum mismatch)"); the per-section decoders (profile_section_readers.h) throw it too.
#pragma once

#include <fmt/core.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/profile_sections.h"

namespace lockscope::profile_decoding {

struct BadFile : std::runtime_error {
  using std::runtime_error::runtime_error;
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

// Checked views over the validated sections of `bytes` (which must outlive the set).
class SectionSet {
 public:
  explicit SectionSet(const std::string& bytes) : bytes_(bytes) {}

  // Validates the header and every section; throws BadFile at the first problem.
  void parse();

  uint32_t version() const { return version_; }
  // Sections of types this reader does not know, skipped.
  uint32_t unknown_sections() const { return unknown_sections_; }

  // Section T's records (none when an optional section is absent). Throws BadFile when a required
  // section is missing or its records are not of its record's size.
  template <format::SectionType T>
  Records<format::SectionRecordOf<T>> records() const {
    const format::SectionSpec& spec = format::section_spec_of<T>();
    const Section& section = sections_[static_cast<uint32_t>(T)];
    if (!section.present) {
      if (spec.required) throw BadFile(fmt::format("missing section '{}'", spec.name));
      return {};
    }
    if (section.record_size != spec.record_size)
      throw BadFile(fmt::format("section '{}' has records of {} bytes, expected {}", spec.name,
                                section.record_size, spec.record_size));
    return Records<format::SectionRecordOf<T>>(section.data, section.count);
  }

  // The string a StringRef names in the strings section.
  std::string string(format::StringRef ref) const;
  // A NUL-terminated string at `offset` of the strings section (the reference's offset + 1).
  std::string c_string(uint32_t offset_plus_one) const;
  // The NUL-terminated strings that follow the one at `offset_plus_one` (version 4's exec target):
  // fewer than `count` when the section ends first.
  std::vector<std::string> c_strings(uint32_t offset_plus_one, size_t count) const;

 private:
  struct Section {
    bool present = false;
    uint32_t record_size = 0;
    const unsigned char* data = nullptr;
    uint64_t count = 0;
  };
  const Section& strings() const {
    return sections_[static_cast<uint32_t>(format::SectionType::kStrings)];
  }

  const std::string& bytes_;
  // The strings section's bytes, not the file's: parse() sets it.
  mutable ReferenceBudget string_bytes_{0, "string references"};
  Section sections_[format::kSectionTypes + 1];  // by type; [0] unused
  uint32_t unknown_sections_ = 0;
  uint32_t version_ = 0;
};

}  // namespace lockscope::profile_decoding
