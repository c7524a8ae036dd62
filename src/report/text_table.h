// A plain-text table: columns sized to their widest cell (UTF-8 aware), numbers right-aligned;
// and the text fitting the text report does to stay within its width (80 columns for the first
// screen, 120 for the tables): prose wrapped at spaces, names and code locations cut where they
// lose least (a file path's directories first, then the middle, never the file:line at the end).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace lockscope {

// How a column that does not fit gives way.
enum class CellFit {
  kCutEnd,     // "git pack-objects --no-reuse-de…": a command line, whose start says most
  kCutMiddle,  // "serve_requests …/kvcache_demo.cpp:83": a name, whose end (file:line) says most
  kWrap,       // onto continuation lines under the column (the last column only): a call site
};

class TextTable {
 public:
  void set_header(std::vector<std::string> header, std::vector<bool> left_aligned);
  void add_row(std::vector<std::string> cells);
  // Keeps every line within `max_width` columns: column `column` (a left-aligned text column)
  // gets what the others leave, but never less than `min_width`, and its wider cells give way as
  // `fit` says. A table whose other columns alone are wider stays wider.
  void fit_within(size_t max_width, size_t column, CellFit fit, size_t min_width = 24);
  void write(std::ostream& out, const std::string& indent = "") const;
  bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> header_;
  std::vector<bool> left_aligned_;
  std::vector<std::vector<std::string>> rows_;
  size_t max_width_ = 0;  // 0: no limit
  size_t fit_column_ = 0;
  CellFit fit_ = CellFit::kCutMiddle;
  size_t min_width_ = 0;
};

// Columns a string takes on a terminal: its code points (the report's non-ASCII characters, µ ≤ …,
// are one column each).
size_t display_width(const std::string& text);

// `text` cut to `width` columns (or as it is when it fits): its start and "…".
std::string cut_end(const std::string& text, size_t width);
// `text` with the leading directories of its file paths left out ("…/demo/x.cpp:83"), the first
// paths first, until it fits `width` columns or they are file names only.
std::string shorten_paths(const std::string& text, size_t width);
// `text` cut to `width` columns keeping its end: first a path's leading directories
// ("…/demo/x.cpp:83"), then its middle, so that a name's file:line, a lock's " read" or "@…cf90"
// survive.
std::string cut_middle(const std::string& text, size_t width);
// `text` as lines of at most `width` columns, broken at spaces; a word longer than a line (a file
// path) is cut as cut_middle cuts it, or with `cut_words` false (prose that names files and URLs
// to use) left whole on a line of its own.
std::vector<std::string> wrap_text(const std::string& text, size_t width, bool cut_words = true);

// The report's width for everything but its first screen (TextReportWriter's tables, stacks and
// notes): what a terminal beside an editor holds.
inline constexpr size_t kReportWidth = 120;

// `text` (an indented line, without its '\n') within `width` columns: its paths shortened (with
// `shorten`), and where that is not enough wrapped at spaces, the continuation lines indented
// `hang` columns more.
void write_wrapped_line(std::ostream& out, const std::string& text, size_t width = kReportWidth,
                        size_t hang = 4, bool shorten = true);

}  // namespace lockscope
