// The sarif format (-f sarif, -o report.sarif): the findings of the diagnosis as a SARIF 2.1.0 log
// (OASIS Static Analysis Results Interchange Format), for code-scanning views and the editors
// that read it. One run, whose tool lists every rule of the rule table
// (analysis/diagnosis/rule_table.h) and whose results are the findings, ranked:
//   - ruleId: the rule's id; level: the finding's severity ("note", "warning", "error": SARIF's
//     levels); message: its title and its advice;
//   - locations: its first source line (artifactLocation uri, region startLine); its other
//     source lines are relatedLocations. A finding without a source line (the verdict) has none;
//   - properties: its locks by name (pid, name, name_source, address, generation), its evidence
//     by key, and time_at_stake_ns, by which the results are ranked.
// A source file's uri is a file:// URI when its path is absolute, else a relative reference (a
// path relative to the program's build directory, as its debug info gave it), percent-encoded.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "analysis/diagnosis/finding.h"
#include "analysis/profile_views.h"

namespace lockscope {

// The log of `findings` (which name locks and sites of `views`' profile). The writer passes
// views.findings(); a test may pass findings of its own.
void write_sarif_log(const ProfileViews& views, const std::vector<Finding>& findings,
                     std::ostream& out);

// A source path as a SARIF artifactLocation uri: "/src/a b.c" -> "file:///src/a%20b.c",
// "src/x.c" -> "src/x.c" (every byte but the unreserved characters and '/' percent-encoded).
std::string sarif_uri(const std::string& path);

}  // namespace lockscope
