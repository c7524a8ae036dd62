// The payloads of a profile's sections while the writer fills them: one buffer per section type of
// the section table (common/profile_sections.h), appended to only with that section's own record
// type (append<T> takes a SectionRecordOf<T>), so that a record cannot land in another section.
// Buffers on mmap (byte_buffer.h): the writer may not allocate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "common/profile_sections.h"
#include "runtime/byte_buffer.h"
#include "runtime/site_table.h"

namespace lockscope::runtime {

class SectionBuffers {
 public:
  template <format::SectionType T>
  ByteBuffer& payload() {
    return payloads_[index(T)];
  }
  ByteBuffer& payload(format::SectionType type) { return payloads_[index(type)]; }

  template <format::SectionType T>
  bool append(const format::SectionRecordOf<T>& record) {
    return payload<T>().append_record(record);
  }
  // The records section T holds so far: the number the next one will have.
  template <format::SectionType T>
  uint32_t count() {
    return static_cast<uint32_t>(payload<T>().size() / sizeof(format::SectionRecordOf<T>));
  }

  format::StringRef add_string(const char* text, size_t length) {
    ByteBuffer& strings = payload<format::SectionType::kStrings>();
    format::StringRef ref{static_cast<uint32_t>(strings.size()), static_cast<uint32_t>(length)};
    strings.append(text, length);
    return ref;
  }
  // An empty run of histogram bins, at the end of the section: add_bin extends it.
  format::HistogramRef next_histogram() { return {count<format::SectionType::kHistograms>(), 0}; }
  void add_bin(format::HistogramRef& ref, int bucket, uint64_t count) {
    append<format::SectionType::kHistograms>(
        format::HistogramBin{static_cast<uint32_t>(bucket), 0, count});
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

 private:
  static size_t index(format::SectionType type) { return static_cast<size_t>(type) - 1; }
  ByteBuffer payloads_[format::kSectionTypes];  // by type - 1
};

}  // namespace lockscope::runtime
