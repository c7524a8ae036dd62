// The text report's call stacks, each printed once: the first time a stack is shown it gets an id
// and its frames ("stack #3", then a line per frame); every later time only its id ("stack #3,
// above"). A lock's wait stack is often the stack its holders released from, and the same
// 10-frame stack was printed three or four times per lock. Ids follow the order stacks are first
// printed, so they are stable within one report; two stacks whose frames read the same (one
// function's, in two processes) are one stack to a reader and share an id.
//
// Stacks of one program also share their outer frames (a thread's entry, main's callers): a new
// stack whose outer frames are those of a stack printed in full before prints only its own inner
// frames, then "… as stack #1 from FRAME", so that no reference leads to another reference.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/profile_model.h"

namespace lockscope {

class StackIds {
 public:
  // Writes `lead` (an indented line, "    20.8ms in 10 waits") ending with the stack's id; the
  // first time, the frames follow it, indented by `frame_indent`. Lines stay within the report's
  // width (text_table.h's kReportWidth).
  void write(const std::string& lead, const std::vector<CodeLocation>& frames,
             const std::string& frame_indent, std::ostream& out);

 private:
  struct Printed {
    size_t id = 0;
    std::vector<std::string> lines;  // every frame's
  };
  std::map<std::vector<std::string>, size_t> ids_;  // by the lines its frames print as
  std::vector<Printed> whole_;  // the stacks printed in full: those a later one may end with
};

}  // namespace lockscope
