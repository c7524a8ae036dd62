// pprof: pprof's profile.proto (perftools.profiles.Profile, as Debian's
// golang-github-google-pprof-dev installs it), gzip-compressed, for `go tool pprof` and the
// continuous-profiling services that read it. Built from the one stack view every stack format
// reads (analysis/weighted_stacks.h, which says what is counted), in the shape of Go's mutex
// profile:
//   - sample types contentions/count and delay/nanoseconds (--weight hold: holds/count and
//     hold/nanoseconds); period type the first of them, period 1 (every wait is counted, none
//     sampled). Over a process the samples add up to its lock wait (hold) total.
//   - a sample's locations are its call stack, innermost (the call site) first, as pprof wants.
//     A location is one physical frame: its lines are the functions inlined there, the innermost
//     first and the function they were inlined into last (profile.proto's Location.line). The
//     lock is a label, not a frame, as in Go's profiles.
//   - labels: pid (number) and process ("pid 4908 (git)"), lock (its name, lock_names.h:
//     "account_a", "serve_requests kvcache_demo.cpp:83", so that `-tagfocus lock=account_a`
//     selects it), lock_address (its address, "#generation" for a reused address: locks may share
//     a name), lock_kind ("mutex/recursive", "rwlock"), operation ("lock", "rdlock",
//     "cond-reacquire"). No thread label: the stacks are kept per call site, not per thread.
// A location's address is the call instruction's (the return address less one: what lockscope
// symbolized), in a mapping per module of each process (its path, build ID and address range).
// Every mapping says it has functions, file names, lines and inline frames, so pprof shows
// lockscope's symbols and does not look for the binaries again. A Function's name is the demangled
// name without its parameters (as the text report prints it), its system_name the whole demangled
// name; a frame with no symbol is named by its label.
// time_nanos is the first process's start, duration_nanos the span to the last one's end.
#include <fmt/core.h>
#include <zlib.h>

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

#include "analysis/lock_names.h"
#include "analysis/profile_symbolization.h"
#include "analysis/wait_attribution.h"
#include "profile.pb.h"
#include "report/report_writer.h"

namespace lockscope {
namespace {

namespace pb = perftools::profiles;

// The profile's string table: index 0 is "", each string once.
class StringTable {
 public:
  explicit StringTable(pb::Profile& profile) : profile_(profile) { index(""); }
  int64_t index(const std::string& text) {
    auto [at, added] = indexes_.try_emplace(text, profile_.string_table_size());
    if (added) profile_.add_string_table(text);
    return at->second;
  }

 private:
  pb::Profile& profile_;
  std::map<std::string, int64_t> indexes_;
};

class PprofBuilder {
 public:
  PprofBuilder() : strings_(profile_) {}

  void set_value_types(StackWeight weight) {
    const bool hold = weight == StackWeight::kHold;
    add_value_type(*profile_.add_sample_type(), hold ? "holds" : "contentions", "count");
    add_value_type(*profile_.add_sample_type(), hold ? "hold" : "delay", "nanoseconds");
    add_value_type(*profile_.mutable_period_type(), hold ? "holds" : "contentions", "count");
    profile_.set_period(1);
    profile_.set_default_sample_type(strings_.index(hold ? "hold" : "delay"));
  }

  void add_comment(const std::string& text) { profile_.add_comment(strings_.index(text)); }

  void add_process(const ProcessProfile& process, size_t process_index, StackWeight weight) {
    const std::string process_name = process_frame_name(process);
    for (const WeightedStack& stack : weighted_stacks(process, weight)) {
      pb::Sample& sample = *profile_.add_sample();
      const std::vector<CodeLocation> innermost_first(stack.frames.rbegin(), stack.frames.rend());
      for (const std::vector<CodeLocation>& physical : physical_frame_groups(innermost_first))
        sample.add_location_id(location_id(process, process_index, physical));
      sample.add_value(static_cast<int64_t>(stack.count));
      sample.add_value(static_cast<int64_t>(stack.weight_ns));
      add_label(sample, "pid").set_num(process.pid);
      add_label(sample, "process").set_str(strings_.index(process_name));
      std::string address = fmt::format("0x{:x}", stack.lock->address);
      if (stack.lock->generation > 0) address += fmt::format("#{}", stack.lock->generation);
      add_label(sample, "lock").set_str(strings_.index(lock_name(*stack.lock)));
      add_label(sample, "lock_address").set_str(strings_.index(address));
      add_label(sample, "lock_kind").set_str(strings_.index(lock_kind_name(*stack.lock)));
      add_label(sample, "operation").set_str(strings_.index(operation_name(stack.operation)));
      // Its call site alone (over the capture budget, --stack-depth 0): not a stack begun there.
      if (!stack.captured) add_label(sample, "stack").set_str(strings_.index("not captured"));
    }
  }

  // time_nanos and duration_nanos over the processes that say when they ran.
  void set_times(const std::vector<ProcessProfile>& processes) {
    uint64_t start = std::numeric_limits<uint64_t>::max(), end = 0;
    for (const ProcessProfile& process : processes) {
      if (process.start_realtime_ns == 0) continue;
      start = std::min(start, process.start_realtime_ns);
      end = std::max(end, process.start_realtime_ns + process.duration_ns);
    }
    if (end == 0) return;
    profile_.set_time_nanos(static_cast<int64_t>(start));
    profile_.set_duration_nanos(static_cast<int64_t>(end - start));
  }

  std::string serialized() const {
    std::string bytes;
    if (!profile_.SerializeToString(&bytes))
      throw std::runtime_error("cannot encode the pprof profile");
    return bytes;
  }

 private:
  void add_value_type(pb::ValueType& type, const std::string& name, const std::string& unit) {
    type.set_type(strings_.index(name));
    type.set_unit(strings_.index(unit));
  }

  pb::Label& add_label(pb::Sample& sample, const std::string& key) {
    pb::Label& label = *sample.add_label();
    label.set_key(strings_.index(key));
    return label;
  }

  // One location per physical frame of a process: the frames of one (module, offset) are
  // symbolized alike, so that is its identity.
  uint64_t location_id(const ProcessProfile& process, size_t process_index,
                       const std::vector<CodeLocation>& physical) {
    const CodeLocation& frame = physical.front();
    const auto key = std::make_tuple(process_index, frame.module, frame.offset);
    auto [at, added] = location_ids_.try_emplace(key, profile_.location_size() + 1);
    if (!added) return at->second;
    pb::Location& location = *profile_.add_location();
    location.set_id(at->second);
    const bool in_module = frame.module < process.modules.size();
    const uint64_t bias = in_module ? process.modules[frame.module].load_bias : 0;
    location.set_address(bias + frame.offset - (frame.offset > 0 ? 1 : 0));
    if (in_module) location.set_mapping_id(mapping_id(process, process_index, frame.module));
    for (const CodeLocation& logical : physical) {
      pb::Line& line = *location.add_line();
      line.set_function_id(function_id(logical));
      line.set_line(logical.line);
    }
    return at->second;
  }

  uint64_t mapping_id(const ProcessProfile& process, size_t process_index, uint32_t module_index) {
    auto [at, added] = mapping_ids_.try_emplace(std::make_pair(process_index, module_index),
                                                profile_.mapping_size() + 1);
    if (!added) return at->second;
    const ModuleSummary& module = process.modules[module_index];
    pb::Mapping& mapping = *profile_.add_mapping();
    mapping.set_id(at->second);
    mapping.set_memory_start(module.start);
    mapping.set_memory_limit(module.end);
    // The lowest PT_LOAD segment begins the file, as ld, gold and lld lay ELF files out.
    mapping.set_file_offset(0);
    mapping.set_filename(strings_.index(module.path));
    mapping.set_build_id(strings_.index(module.build_id_hex));
    mapping.set_has_functions(true);
    mapping.set_has_filenames(true);
    mapping.set_has_line_numbers(true);
    mapping.set_has_inline_frames(true);
    return at->second;
  }

  uint64_t function_id(const CodeLocation& frame) {
    const std::string name =
        frame.function.empty() ? frame.label : short_function_name(frame.function);
    const std::string& system_name = frame.function.empty() ? name : frame.function;
    const auto key = std::make_tuple(name, system_name, frame.file);
    auto [at, added] = function_ids_.try_emplace(key, profile_.function_size() + 1);
    if (!added) return at->second;
    pb::Function& function = *profile_.add_function();
    function.set_id(at->second);
    function.set_name(strings_.index(name));
    function.set_system_name(strings_.index(system_name));
    function.set_filename(strings_.index(frame.file));
    return at->second;
  }

  pb::Profile profile_;
  StringTable strings_;
  std::map<std::tuple<size_t, uint32_t, uint64_t>, uint64_t> location_ids_;
  std::map<std::pair<size_t, uint32_t>, uint64_t> mapping_ids_;
  std::map<std::tuple<std::string, std::string, std::string>, uint64_t> function_ids_;
};

// The gzip stream (RFC 1952) of `bytes`, as profile.proto asks files on disk to be.
std::string gzipped(const std::string& bytes) {
  z_stream stream{};
  constexpr int kGzipWindowBits = 15 + 16;  // zlib: +16 writes a gzip header and trailer
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, kGzipWindowBits, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("cannot start zlib's compressor");
  std::string out(deflateBound(&stream, bytes.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (result != Z_STREAM_END) throw std::runtime_error("zlib could not compress the pprof profile");
  return out;
}

class PprofReportWriter final : public ReportWriter {
 public:
  using ReportWriter::write;
  void write(const ProfileViews& views, const ReportOptions& options, ReportSink& sink) override {
    const Profile& profile = views.profile();
    PprofBuilder builder;
    builder.set_value_types(options.weight);
    builder.add_comment(fmt::format("lockscope: lock {} of {}", stack_weight_name(options.weight),
                                    profile.directory));
    for (size_t p = 0; p < profile.processes.size(); ++p)
      builder.add_process(profile.processes[p], p, options.weight);
    builder.set_times(profile.processes);
    const std::string compressed = gzipped(builder.serialized());
    sink.stream().write(compressed.data(), static_cast<std::streamsize>(compressed.size()));
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_pprof_report_writer() {
  return std::make_unique<PprofReportWriter>();
}

}  // namespace lockscope
