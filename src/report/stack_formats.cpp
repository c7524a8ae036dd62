// The stack formats: each process's lock waits (or holds, --weight hold) by call stack, from the
// one view analysis/weighted_stacks.h computes (which says what is counted), as folded stacks
// and as a speedscope file. Each format is its own writer; they share only that view.
//
// collapsed: folded stacks, the input of flamegraph.pl and inferno: one line per distinct stack,
//   pid 4908 (git);start_thread ...;worker w.c:40;take w.c:12;mutex 0x7ffd1234 81200000
// frames outermost first, separated by ';', then a space and the weight in nanoseconds. The root
// frame is the process, the leaf the lock; between them the call stack, each frame named as the
// text report names it ("function file:line"), an inlined function a frame of its own. Identical
// stacks are merged; lines are sorted, so equal profiles give equal files.
//
// speedscope: speedscope's file format (https://www.speedscope.app/file-format-schema.json, from
// speedscope's src/lib/file-format-spec.ts): one "sampled" profile per process, in nanoseconds,
// with the frames shared between profiles. A sample is a stack, outermost frame first, ending at
// the lock; its weight the time on that stack, so a profile's endValue is the process's lock wait
// (hold) total. The process is the profile, not a frame: speedscope lists the profiles by name.
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <tuple>

#include "report/report_writer.h"

namespace lockscope {
namespace {

using nlohmann::json;

// ';' separates frames and a line ends the record: neither may appear inside a frame's name.
std::string folded_name(std::string name) {
  for (char& c : name)
    if (c == ';' || c == '\n' || c == '\r') c = ':';
  return name;
}

class CollapsedReportWriter final : public ReportWriter {
 public:
  using ReportWriter::write;
  void write(const Profile& profile, const ReportOptions& options, ReportSink& sink) override {
    std::map<std::string, uint64_t> lines;
    for (const ProcessProfile& process : profile.processes) {
      const std::string root = folded_name(process_frame_name(process));
      for (const WeightedStack& stack : weighted_stacks(process, options.weight)) {
        std::string line = root;
        for (const CodeLocation& frame : stack.frames) line += ';' + folded_name(frame.label);
        line += ';' + folded_name(lock_frame_name(*stack.lock, stack.operation));
        lines[line] += stack.weight_ns;
      }
    }
    std::ostream& out = sink.stream();
    for (const auto& [line, weight_ns] : lines) out << line << ' ' << weight_ns << '\n';
  }
};

constexpr const char* kSchemaUrl = "https://www.speedscope.app/file-format-schema.json";

const char* weight_title(StackWeight weight) {
  return weight == StackWeight::kHold ? "lock hold" : "lock wait";
}

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
  return {{"type", "sampled"},
          {"name", process_frame_name(process) + ": " + weight_title(weight)},
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
        {"name", profile.directory + " (" + weight_title(options.weight) + ")"},
        {"activeProfileIndex", 0},
        {"exporter", "lockscope"}};
    // A name that is not UTF-8 (a path in another encoding) is written with U+FFFD, not refused.
    sink.stream() << document.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_collapsed_report_writer() {
  return std::make_unique<CollapsedReportWriter>();
}

std::unique_ptr<ReportWriter> make_speedscope_report_writer() {
  return std::make_unique<SpeedscopeReportWriter>();
}

}  // namespace lockscope
