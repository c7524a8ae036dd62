// One decoder per section of a profile file: each turns its section's records into the Profile
// model (profile_model.h), checking every reference a record makes (to a lock, a call site, a
// stack, a module) and throwing BadFile (profile_section_set.h) at the first that points nowhere.
// Sections refer to earlier ones, so the decoders run in the order decode_profile_sections
// (profile_reader.cpp) calls them; the references between sections that the model does not keep
// (a site record's place among its lock's sites) are handed from one decoder to the next.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "analysis/profile_model.h"
#include "analysis/profile_section_set.h"

namespace lockscope::profile_decoding {

// The bins of the histograms section, each for one histogram reference at most.
class HistogramBins {
 public:
  explicit HistogramBins(Records<format::HistogramBin> bins)
      : bins_(bins), budget_(bins.size(), "histogram references") {}
  LatencyHistogram histogram(format::HistogramRef ref);

 private:
  Records<format::HistogramBin> bins_;
  ReferenceBudget budget_;
};

// Site record number -> (its lock in ProcessProfile::locks, its place in that lock's sites).
using SitePlaces = std::vector<std::pair<size_t, size_t>>;
// Blame record number -> (its site record, its row in that site's blame).
using BlamePlaces = std::vector<std::pair<size_t, size_t>>;

void decode_process(const SectionSet& file, ProcessProfile& out);  // and its strings
void decode_modules(const SectionSet& file, ProcessProfile& out);
void decode_threads(const SectionSet& file, HistogramBins& bins, ProcessProfile& out);
void decode_locks(const SectionSet& file, ProcessProfile& out);
SitePlaces decode_sites(const SectionSet& file, HistogramBins& bins, ProcessProfile& out);
BlamePlaces decode_blame(const SectionSet& file, const SitePlaces& sites, ProcessProfile& out);
void decode_stacks(const SectionSet& file, ProcessProfile& out);  // and their frames
void decode_site_stacks(const SectionSet& file, const SitePlaces& sites, ProcessProfile& out);
void decode_hold_stacks(const SectionSet& file, const SitePlaces& sites, ProcessProfile& out);
void decode_acquire_stacks(const SectionSet& file, const SitePlaces& sites, ProcessProfile& out);
void decode_blame_stacks(const SectionSet& file, const SitePlaces& sites, const BlamePlaces& blame,
                         ProcessProfile& out);
void decode_cpu_handoffs(const SectionSet& file, const SitePlaces& sites, ProcessProfile& out);
void decode_lock_order(const SectionSet& file, ProcessProfile& out);
void decode_order_stacks(const SectionSet& file, ProcessProfile& out);
void decode_thread_facts(const SectionSet& file, ProcessProfile& out);
void decode_process_facts(const SectionSet& file, ProcessProfile& out);
void decode_counters(const SectionSet& file, ProcessProfile& out);

}  // namespace lockscope::profile_decoding
