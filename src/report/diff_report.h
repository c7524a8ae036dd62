// The writers of `lockscope diff` (analysis/compare/run_comparison.h): text for a terminal,
// markdown for a pull request's comment or a CI job's summary, JSON for tools. Each renders the
// comparison; none computes a figure of its own beyond the wording (diff_wording.h).
#pragma once

#include <ostream>
#include <string>

#include "analysis/compare/run_comparison.h"
#include "analysis/compare/stack_diff.h"

namespace lockscope {

struct DiffOptions {
  std::string base_label;     // BASE as given on the command line
  std::string changed_label;  // NEW
  std::size_t top = 10;       // entities listed beyond the significant changes
  bool all = false;           // every matched figure, significant or not
};

void write_diff_text(const compare::Comparison& diff, const DiffOptions& options,
                     std::ostream& out);
void write_diff_markdown(const compare::Comparison& diff, const DiffOptions& options,
                         std::ostream& out);
void write_diff_json(const compare::Comparison& diff, const DiffOptions& options,
                     std::ostream& out);

// -f html: the markdown's content as a page, with a differential flame graph of the lock wait by
// call stack (`stacks`, computed by the CLI from the loaded runs: the comparison has no stacks).
void write_diff_html(const compare::Comparison& diff, const compare::StackDiff& stacks,
                     const DiffOptions& options, std::ostream& out);

}  // namespace lockscope
