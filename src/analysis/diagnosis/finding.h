// A finding: one conclusion the diagnosis draws from a profile, with the lock and the source lines
// it is about, the figures it rests on, what to change, and what the program lost to the cause
// (time_at_stake_ns, measured, never guessed), by which the findings are ranked. Rule ids and the
// fields below are part of the JSON contract (docs/json-schema.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/profile_model.h"

namespace lockscope {

enum class Severity : uint8_t {
  kNote,     // worth knowing; nothing to fix (the verdict when locks do not matter)
  kWarning,  // costs time, worth changing
  kError,    // a defect: a deadlock that happened, one that can happen, a priority inversion
};
// "note", "warning", "error": SARIF 2.1.0's result levels, which the other formats reuse.
const char* severity_name(Severity severity);

// A lock a finding is about: indexes into Profile::processes and its ProcessProfile::locks.
struct FindingLock {
  size_t process = 0;
  size_t lock = 0;
  bool operator==(const FindingLock&) const = default;
};

// One figure a finding rests on, for machines (key, value in its unit: ns, counts, ratios) and
// for people (text: "4,351 of 800,000 acquisitions waited").
struct Evidence {
  std::string key;
  double value = 0;
  std::string text;
};

struct Finding {
  std::string rule;  // the rule's id: "serial-bottleneck"
  Severity severity = Severity::kWarning;
  std::string title;  // one line naming the lock by its name: "account_a: 61 % of its threads' time
                      // waiting"
  std::vector<FindingLock> locks;   // most relevant first; empty when about no lock (the verdict)
  std::vector<CodeLocation> sites;  // the source lines it points at, most relevant first
  std::vector<Evidence> evidence;
  std::string advice;             // one line: what to change
  uint64_t time_at_stake_ns = 0;  // what the program lost to this cause, measured
};

}  // namespace lockscope
