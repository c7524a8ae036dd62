// speedscope's file format (https://www.speedscope.app/file-format-schema.json, from speedscope's
// src/lib/file-format-spec.ts): one "sampled" profile per process, in nanoseconds, weighing lock
// waits (or holds, --weight hold) by call stack, with the frames shared between profiles. A
// sample is a stack, outermost frame first, ending at the lock (analysis/weighted_stacks.h); its
// weight the time on that stack, so a profile's endValue is the process's lock wait (hold) total.
// The process is the profile, not a frame: speedscope lists the profiles by name.
#include <nlohmann/json.hpp>

#include <map>
#include <tuple>

#include "report/report_writer.h"

namespace lockscope {
namespace {

using nlohmann::json;

constexpr const char* kSchemaUrl = "https://www.speedscope.app/file-format-schema.json";

// Frames shared by every profile of the file, each once: by name, file and line.
class SharedFrames {
 public:
  size_t index(const std::string& name, const std::string& file = "", int line = 0) {
    auto [at, added] = index_.try_emplace(std::make_tuple(name, file, line), frames_.size());
    if (added) {
      json frame = {{"name", name}};
      if (!file.empty()) frame["file"] = file;
      if (line > 0) frame["line"] = line;
      frames_.push_back(std::move(frame));
    }
    return at->second;
  }
  json frames() const { return frames_; }

 private:
  std::map<std::tuple<std::string, std::string, int>, size_t> index_;
  json frames_ = json::array();
};

json process_profile(const ProcessProfile& process, StackWeight weight, SharedFrames& frames) {
  json samples = json::array(), weights = json::array();
  uint64_t total = 0;
  for (const WeightedStack& stack : weighted_stacks(process, weight)) {
    json sample = json::array();
    for (const CodeLocation& frame : stack.frames)
      sample.push_back(frames.index(frame.label, frame.file, frame.line));
    sample.push_back(frames.index(lock_frame_name(*stack.lock, stack.operation)));
    samples.push_back(std::move(sample));
    weights.push_back(stack.weight_ns);
    total += stack.weight_ns;
  }
  const char* what = weight == StackWeight::kHold ? "lock hold" : "lock wait";
  return {{"type", "sampled"},
          {"name", process_frame_name(process) + ": " + what},
          {"unit", "nanoseconds"},
          {"startValue", 0},
          {"endValue", total},
          {"samples", samples},
          {"weights", weights}};
}

class SpeedscopeReportWriter final : public ReportWriter {
 public:
  using ReportWriter::write;
  void write(const Profile& profile, const ReportOptions& options, ReportSink& sink) override {
    SharedFrames frames;
    json profiles = json::array();
    for (const ProcessProfile& process : profile.processes)
      profiles.push_back(process_profile(process, options.weight, frames));
    const json document = {
        {"$schema", kSchemaUrl},
        {"shared", {{"frames", frames.frames()}}},
        {"profiles", profiles},
        {"name", profile.directory + (options.weight == StackWeight::kHold ? " (lock hold)"
                                                                           : " (lock wait)")},
        {"activeProfileIndex", 0},
        {"exporter", "lockscope"}};
    sink.stream() << document.dump() << '\n';
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_speedscope_report_writer() {
  return std::make_unique<SpeedscopeReportWriter>();
}

}  // namespace lockscope
