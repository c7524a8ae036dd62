#include "analysis/profile_reader.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "analysis/hold_bounds.h"
#include "analysis/profile_section_readers.h"
#include "analysis/profile_section_set.h"
#include "analysis/regular_file.h"
#include "analysis/trace_reader.h"

namespace lockscope {
namespace profile_decoding {
namespace {

// A site's last sample stands for holds that never came (the run ended first): the runtime
// takes them out of that sample's row (SiteDetail::last_sample_stack); in a profile of an
// earlier runtime, where the weights overrun the site's own figures, its stacks are scaled down
// to them, so that hold time by stack never adds up to more than the site's estimate.
void scale_hold_stacks_to_sites(ProcessProfile& out) {
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
}

// Every section's decoder, in the order their references need (a site names its lock, a stack
// row its site and stack, ...). The first problem ends the file's decoding with a BadFile.
ProcessProfile decode_profile_sections(const SectionSet& file) {
  ProcessProfile out;
  decode_process(file, out);
  decode_modules(file, out);
  HistogramBins bins(file.records<format::SectionType::kHistograms>());
  decode_threads(file, bins, out);
  decode_locks(file, out);
  const SitePlaces sites = decode_sites(file, bins, out);
  const BlamePlaces blame = decode_blame(file, sites, out);
  decode_stacks(file, out);
  decode_site_stacks(file, sites, out);
  decode_hold_stacks(file, sites, out);
  decode_acquire_stacks(file, sites, out);
  scale_hold_stacks_to_sites(out);
  decode_blame_stacks(file, sites, blame, out);
  decode_cpu_handoffs(file, sites, out);
  for (LockSummary& lock : out.locks) {  // its sites are all in: its totals
    lock.finish();
    cap_lock_holds(lock, out.duration_ns, out.threads.size());
  }
  decode_lock_order(file, out);
  decode_order_stacks(file, out);
  decode_thread_facts(file, out);
  decode_process_facts(file, out);
  out.unknown_sections = file.unknown_sections();
  decode_counters(file, out);
  return out;
}

}  // namespace
}  // namespace profile_decoding

std::variant<ProcessProfile, std::string> read_profile_file(const std::string& path) {
  try {
    RegularFile in;
    if (std::string problem = in.open(path); !problem.empty()) return problem;
    if (in.size() > kMaxProfileFileBytes)
      return fmt::format("{} bytes, more than a profile can be ({}): not a profile, or damaged",
                         in.size(), byte_size_text(kMaxProfileFileBytes));
    std::string bytes;
    if (std::string problem = in.read_all(bytes); !problem.empty()) return problem;
    profile_decoding::SectionSet sections(bytes);
    sections.parse();
    ProcessProfile process = profile_decoding::decode_profile_sections(sections);
    process.file = path;
    return process;
  } catch (const profile_decoding::BadFile& problem) {
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
