// Folded stacks, the input of flamegraph.pl and inferno: one line per distinct stack,
//   pid 4908 (git);start_thread ...;worker w.c:40;take w.c:12;mutex 0x7ffd1234 81200000
// frames outermost first, separated by ';', then a space and the weight in nanoseconds (lock wait
// by default, hold time with --weight hold; analysis/weighted_stacks.h says what is counted).
// The root frame is the process, the leaf the lock; between them the call stack, each frame named
// as the text report names it ("function file:line"), an inlined function a frame of its own.
// Identical stacks are merged; lines are sorted, so equal profiles give equal files.
#include <map>
#include <string>

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

}  // namespace

std::unique_ptr<ReportWriter> make_collapsed_report_writer() {
  return std::make_unique<CollapsedReportWriter>();
}

}  // namespace lockscope
