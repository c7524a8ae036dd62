#include "report/stack_ids.h"

#include <fmt/core.h>

#include <algorithm>
#include <sstream>

#include "report/location_text.h"
#include "report/text_table.h"

namespace lockscope {
namespace {

// A shared tail of one frame saves nothing over the line that refers to it.
constexpr size_t kMinSharedLines = 2;

size_t common_tail(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[a.size() - 1 - n] == b[b.size() - 1 - n]) ++n;
  return n;
}

// "LEAD: stack #3" within the report's width, the id never split over two lines (a reader looks
// for "stack #3").
void write_lead(std::string id, const std::string& lead, std::ostream& out) {
  constexpr char kUnbroken = '\x01';  // a space that wrapping does not break at
  std::replace(id.begin(), id.end(), ' ', kUnbroken);
  std::ostringstream line;
  write_wrapped_line(line, lead + ": " + id);
  std::string text = line.str();
  std::replace(text.begin(), text.end(), kUnbroken, ' ');
  out << text;
}

}  // namespace

void StackIds::write(const std::string& lead, const std::vector<CodeLocation>& frames,
                     const std::string& frame_indent, std::ostream& out) {
  std::vector<std::string> lines;
  for (const CodeLocation& frame : frames)
    for (const std::string& line : stack_frame_lines(frame)) lines.push_back(line);
  const auto [at, added] = ids_.try_emplace(lines, ids_.size() + 1);
  write_lead(fmt::format("stack #{}{}", at->second, added ? "" : ", above"), lead, out);
  if (!added) return;
  // The stack printed in full whose outer frames are most of ours, if any.
  const Printed* shares = nullptr;
  size_t shared = 0;
  for (const Printed& earlier : whole_)
    if (const size_t n = common_tail(lines, earlier.lines); n > shared && n < lines.size()) {
      shares = &earlier;
      shared = n;
    }
  if (shared < kMinSharedLines) shared = 0;
  const size_t room = kReportWidth - std::min(kReportWidth / 2, display_width(frame_indent));
  for (size_t i = 0; i + shared < lines.size(); ++i)
    out << frame_indent << cut_middle(lines[i], room) << '\n';
  if (shared == 0) {
    whole_.push_back({at->second, std::move(lines)});
    return;
  }
  out << frame_indent
      << cut_middle(fmt::format("… as stack #{} from {}", shares->id, lines[lines.size() - shared]),
                    room)
      << '\n';
}

}  // namespace lockscope
