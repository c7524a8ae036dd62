// The text report's first screen: what to change, before the figures behind it. Within 80 columns
// and 40 lines (a terminal's first screen, and what `--brief` prints): the verdict, then the top
// findings, at most five, in diagnose()'s order (by the time each cost the program), each with its
// lock by name, its source lines, the figures it rests on and one line of advice. Long names and
// code locations wrap at spaces; a word longer than a line (a file path) loses its leading
// directories first, so that its file:line stays.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/profile_views.h"

namespace lockscope {

inline constexpr size_t kFirstScreenWidth = 80;
inline constexpr size_t kFirstScreenLines = 40;
inline constexpr size_t kFirstScreenFindings = 5;

// `findings`: diagnose()'s, ranked, the verdict first (the views' findings(); a test's own), about
// the locks of `views`. `heading`: the report's first line ("lockscope report of DIR: 2
// processes, 6 threads"). `brief`: nothing follows it (the line that counts the findings left
// out says where they are). Returns how many findings the first screen left out:
// write_more_findings lists them.
size_t write_first_screen(const ProfileViews& views, const std::vector<Finding>& findings,
                          const std::string& heading, bool brief, std::ostream& out);

// The findings the first screen left out (the last `left_out` of `findings`), in the same form,
// under their own heading: the full report's, after the first screen.
void write_more_findings(const ProfileViews& views, const std::vector<Finding>& findings,
                         size_t left_out, std::ostream& out);

}  // namespace lockscope
