#include "analysis/utf8_repair.h"

#include <fmt/core.h>

namespace lockscope {

size_t valid_sequence_at(std::string_view text, size_t at) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  if (byte(at + 1) < low || byte(at + 1) > high) return 0;
  for (size_t i = 2; i < length; ++i)
    if (byte(at + i) < 0x80 || byte(at + i) > 0xBF) return 0;
  return length;
}

namespace {

// A control character: C0 (tab and newline included: they break a table's row), DEL, and C1
// (U+0080 to U+009F, encoded C2 80 to C2 9F), which some terminals obey as escape sequences.
bool is_control_at(std::string_view text, size_t at, size_t length) {
  const auto lead = static_cast<unsigned char>(text[at]);
  if (length == 1) return lead < 0x20 || lead == 0x7F;
  return length == 2 && lead == 0xC2 && static_cast<unsigned char>(text[at + 1]) <= 0x9F;
}

class StringRepair {
 public:
  void operator()(std::string& text) {
    if (is_clean_text(text)) return;
    text = repair_text(text);
    ++repaired_;
  }
  void operator()(CodeLocation& where) {
    (*this)(where.function);
    (*this)(where.file);
    (*this)(where.label);
    for (std::string& frame : where.inlined_from) (*this)(frame);
  }
  uint64_t repaired() const { return repaired_; }

 private:
  uint64_t repaired_ = 0;
};

void repair_process(ProcessProfile& process, StringRepair& repair) {
  repair(process.file);
  repair(process.exec_target);
  repair(process.exec_resolved);
  repair(process.exec_unprofilable);
  repair(process.executable);
  for (std::string& argument : process.arguments) repair(argument);
  for (ModuleSummary& module : process.modules) repair(module.path);
  for (ThreadSummary& thread : process.threads) repair(thread.name);
  for (LockSummary& lock : process.locks) {
    repair(lock.init_site);
    repair(lock.first_use_site);
    repair(lock.name);
    for (SiteSummary& site : lock.sites) {
      repair(site.location);
      for (Blame& blame : site.blame) repair(blame.holder_site);
    }
  }
  for (LockOrderEdge& edge : process.lock_order) {
    repair(edge.from_site);
    repair(edge.to_site);
  }
  for (std::vector<CodeLocation>& stack : process.stacks)
    for (CodeLocation& frame : stack) repair(frame);
  for (TraceThread& thread : process.trace.threads) {
    repair(thread.file);
    repair(thread.problem);
  }
  for (CodeLocation& site : process.trace.sites) repair(site);
  for (TraceRecord& event : process.trace.events) repair(event.name);
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  for (size_t at = 0; at < text.size();) {
    // ASCII runs, eight bytes at a time: most strings are all ASCII.
    while (at + 8 <= text.size()) {
      uint64_t word;
      __builtin_memcpy(&word, text.data() + at, 8);
      if (word & 0x8080808080808080ull) break;
      at += 8;
    }
    if (at >= text.size()) break;
    const size_t length = valid_sequence_at(text, at);
    if (length == 0) return false;
    at += length;
  }
  return true;
}

bool is_clean_text(std::string_view text) {
  for (size_t at = 0; at < text.size();) {
    while (at + 8 <= text.size()) {  // printable ASCII runs, eight bytes at a time
      uint64_t word;
      __builtin_memcpy(&word, text.data() + at, 8);
      // no byte with its top bit set, and none below 0x20 (SWAR: (b - 0x20) borrows into bit 7)
      // nor equal to 0x7F ((b + 1) carries into bit 7)
      constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
      if ((word | (word - 0x20 * kOnes) | (word + kOnes)) & kHigh) break;
      at += 8;
    }
    if (at >= text.size()) break;
    const size_t length = valid_sequence_at(text, at);
    if (length == 0 || is_control_at(text, at, length)) return false;
    at += length;
  }
  return true;
}

std::string repair_text(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (size_t at = 0; at < text.size();) {
    const size_t length = valid_sequence_at(text, at);
    if (length == 0 || (length == 1 && is_control_at(text, at, 1))) {
      out += fmt::format("\\x{:02X}", static_cast<unsigned char>(text[at]));
      ++at;
    } else if (is_control_at(text, at, length)) {
      out += fmt::format("\\u{:04X}", static_cast<unsigned char>(text[at + 1]));
      at += length;
    } else {
      out.append(text.substr(at, length));
      at += length;
    }
  }
  return out;
}

void repair_profile_strings(Profile& profile) {
  StringRepair repair;
  repair(profile.directory);
  for (ProfileProblem& problem : profile.problems) {
    repair(problem.file);
    repair(problem.message);
  }
  for (ProcessProfile& process : profile.processes) repair_process(process, repair);
  profile.repaired_strings += repair.repaired();
}

}  // namespace lockscope
