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
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "report/json_writer.h"
#include "report/report_writer.h"

namespace lockscope {
namespace {

// ';' separates frames and a line ends the record: neither may appear inside a frame's name.
std::string folded_name(std::string name) {
  for (char& c : name)
    if (c == ';' || c == '\n' || c == '\r') c = ':';
  return name;
}

class CollapsedReportWriter final : public ReportWriter {
 public:
  using ReportWriter::write;
  void write(const ProfileViews& views, const ReportOptions& options, ReportSink& sink) override {
    const Profile& profile = views.profile();
    std::map<std::string, uint64_t> lines;
    for (const ProcessProfile& process : profile.processes) {
      const std::string root = folded_name(process_frame_name(process));
      for (const WeightedStack& stack : weighted_stacks(process, options.weight)) {
        std::string line = root;
        if (!stack.captured) line += ';' + folded_name(kStackNotCapturedFrame);
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
  struct Frame {
    std::string name, file;
    int line;
  };
  size_t index(const std::string& name, const std::string& file = "", int line = 0) {
    auto [at, added] = index_.try_emplace(std::make_tuple(name, file, line), frames_.size());
    if (added) frames_.push_back({name, file, line});
    return at->second;
  }
  const std::vector<Frame>& frames() const { return frames_; }

 private:
  std::map<std::tuple<std::string, std::string, int>, size_t> index_;
  std::vector<Frame> frames_;
};

// One "sampled" profile (members in name order, as the file always had them).
void process_profile(JsonWriter& w, const ProcessProfile& process, StackWeight weight,
                     SharedFrames& frames) {
  std::vector<std::vector<size_t>> samples;
  std::vector<uint64_t> weights;
  uint64_t total = 0;
  for (const WeightedStack& stack : weighted_stacks(process, weight)) {
    std::vector<size_t>& sample = samples.emplace_back();
    if (!stack.captured) sample.push_back(frames.index(kStackNotCapturedFrame));
    for (const CodeLocation& frame : stack.frames)
      sample.push_back(frames.index(frame.label, frame.file, frame.line));
    sample.push_back(frames.index(lock_frame_name(*stack.lock, stack.operation)));
    weights.push_back(stack.weight_ns);
    total += stack.weight_ns;
  }
  w.begin_object()
      .field("endValue", total)
      .field("name", process_frame_name(process) + ": " + weight_title(weight))
      .array("samples");
  for (const std::vector<size_t>& sample : samples) w.values(sample);
  w.end_array()
      .field("startValue", 0)
      .field("type", "sampled")
      .field("unit", "nanoseconds")
      .key("weights")
      .values(weights)
      .end_object();
}

class SpeedscopeReportWriter final : public ReportWriter {
 public:
  using ReportWriter::write;
  void write(const ProfileViews& views, const ReportOptions& options, ReportSink& sink) override {
    const Profile& profile = views.profile();
    // Streamed, compact, members in name order: the profiles come before the frames they share.
    // A name that is not UTF-8 (a path in another encoding) is written with U+FFFD, not refused.
    JsonWriter w(sink.stream(), {.indent = -1});
    w.begin_object()
        .field("$schema", kSchemaUrl)
        .field("activeProfileIndex", 0)
        .field("exporter", "lockscope")
        .field("name", profile.directory + " (" + weight_title(options.weight) + ")")
        .array("profiles");
    SharedFrames frames;
    for (const ProcessProfile& process : profile.processes)
      process_profile(w, process, options.weight, frames);
    w.end_array().object("shared").array("frames");
    for (const SharedFrames::Frame& frame : frames.frames()) {
      w.begin_object();
      if (!frame.file.empty()) w.field("file", frame.file);
      if (frame.line > 0) w.field("line", frame.line);
      w.field("name", frame.name).end_object();
    }
    w.end_array().end_object().end_object().finish();
    sink.stream() << '\n';
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
