#include "report/text_table.h"

#include <algorithm>

namespace lockscope {
namespace {

constexpr char kEllipsis[] = "…";

bool starts_code_point(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
}

// The byte offset of the `columns`th code point (the size when there are fewer).
size_t byte_offset(const std::string& text, size_t columns) {
  size_t seen = 0;
  for (size_t i = 0; i < text.size(); ++i)
    if (starts_code_point(text[i]) && seen++ == columns) return i;
  return text.size();
}

std::string first_columns(const std::string& text, size_t columns) {
  return text.substr(0, byte_offset(text, columns));
}

std::string last_columns(const std::string& text, size_t columns) {
  const size_t width = display_width(text);
  return columns >= width ? text : text.substr(byte_offset(text, width - columns));
}

// A word that names a file ("/work/demo/kvcache_demo.cpp:83") without its leading directories,
// one at a time, until it fits: "…/demo/kvcache_demo.cpp:83", "…/kvcache_demo.cpp:83".
std::string shorten_path(std::string word, size_t width) {
  while (display_width(word) > width) {
    size_t from = word.rfind(kEllipsis, 0) == 0 ? sizeof(kEllipsis) : 0;  // past "…/"
    if (from < word.size() && word[from] == '/') ++from;                  // an absolute path's root
    const size_t slash = word.find('/', from);
    if (slash == std::string::npos) break;  // the file's own name is all that is left
    word = kEllipsis + word.substr(slash);
  }
  return word;
}

}  // namespace

size_t display_width(const std::string& text) {
  size_t width = 0;
  for (char c : text) width += starts_code_point(c);  // count code points, not continuation bytes
  return width;
}

std::string cut_end(const std::string& text, size_t width) {
  if (display_width(text) <= width) return text;
  if (width == 0) return "";
  return first_columns(text, width - 1) + kEllipsis;
}

std::string shorten_paths(const std::string& text, size_t width) {
  size_t over = display_width(text) > width ? display_width(text) - width : 0;
  if (over == 0) return text;
  std::string shortened;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(start, end - start);
    // A URL ("https://debuginfod.debian.net") is no file path: cut, it would lead nowhere.
    if (over > 0 && word.find('/') != std::string::npos && word.find("://") == std::string::npos) {
      const size_t before = display_width(word);
      word = shorten_path(word, before > over ? before - over : 0);
      over -= std::min(over, before - display_width(word));
    }
    shortened += (start == 0 ? "" : " ") + word;
    start = end + 1;
  }
  return shortened;
}

std::string cut_middle(const std::string& text, size_t width) {
  // The paths first: a name's function and file:line stay whole where they can.
  const std::string shortened = shorten_paths(text, width);
  if (display_width(shortened) <= width) return shortened;
  if (width == 0) return "";
  // Then the middle, keeping more of the end, which says where (file:line) or which (a side).
  const size_t tail = (width - 1) * 3 / 5, head = width - 1 - tail;
  std::string cut = first_columns(shortened, head) + kEllipsis + last_columns(shortened, tail);
  // Where the cut meets a path's "…", one says it.
  for (size_t twice; (twice = cut.find("……")) != std::string::npos;)
    cut.erase(twice, sizeof(kEllipsis) - 1);
  return cut;
}

std::vector<std::string> wrap_text(const std::string& text, size_t width, bool cut_words) {
  std::vector<std::string> lines;
  std::string line;
  size_t start = 0, spaces = 0;  // the spaces before the next word (two between columns)
  while (start <= text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(start, end - start);
    if (cut_words) word = cut_middle(word, width);
    start = end + 1;
    if (word.empty()) {
      ++spaces;
      continue;
    }
    if (!line.empty() && display_width(line) + spaces + 1 + display_width(word) > width) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : std::string(spaces + 1, ' ')) + word;
    spaces = 0;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

void TextTable::set_header(std::vector<std::string> header, std::vector<bool> left_aligned) {
  header_ = std::move(header);
  left_aligned_ = std::move(left_aligned);
}

void TextTable::add_row(std::vector<std::string> cells) {
  rows_.push_back(std::move(cells));
}

void TextTable::fit_within(size_t max_width, size_t column, CellFit fit, size_t min_width) {
  max_width_ = max_width;
  fit_column_ = column;
  fit_ = fit;
  min_width_ = min_width;
}

void TextTable::write(std::ostream& out, const std::string& indent) const {
  std::vector<size_t> widths(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size() && i < widths.size(); ++i)
      widths[i] = std::max(widths[i], display_width(cells[i]));
  };
  measure(header_);
  for (const auto& row : rows_) measure(row);
  if (max_width_ > 0 && fit_column_ < widths.size()) {
    size_t others = display_width(indent) + 2 * (widths.size() - 1);
    for (size_t i = 0; i < widths.size(); ++i)
      if (i != fit_column_) others += widths[i];
    const size_t room = max_width_ > others ? max_width_ - others : 0;
    widths[fit_column_] = std::min(
        widths[fit_column_], std::max({room, min_width_, display_width(header_[fit_column_])}));
  }
  auto emit = [&](const std::vector<std::string>& cells) {
    std::vector<std::string> fitted(widths.size());
    std::vector<std::string> continuation;  // a wrapped cell's further lines
    for (size_t i = 0; i < widths.size(); ++i) {
      fitted[i] = i < cells.size() ? cells[i] : "";
      if (display_width(fitted[i]) <= widths[i]) continue;
      if (fit_ == CellFit::kWrap && i + 1 == widths.size()) {
        continuation = wrap_text(shorten_paths(fitted[i], widths[i]), widths[i]);
        fitted[i] = continuation.front();
        continuation.erase(continuation.begin());
      } else {
        fitted[i] = fit_ == CellFit::kCutEnd ? cut_end(fitted[i], widths[i])
                                             : cut_middle(fitted[i], widths[i]);
      }
    }
    std::string line = indent;
    size_t last_start = display_width(indent);
    for (size_t i = 0; i < widths.size(); ++i) {
      const std::string& cell = fitted[i];
      const std::string pad(widths[i] - display_width(cell), ' ');
      const bool last = i + 1 == widths.size();
      if (last) last_start = display_width(line);
      if (left_aligned_[i])
        line += cell + (last ? "" : pad);
      else
        line += pad + cell;
      if (!last) line += "  ";
    }
    out << line << '\n';
    for (const std::string& more : continuation)
      out << std::string(last_start, ' ') << more << '\n';
  };
  emit(header_);
  for (const auto& row : rows_) emit(row);
}

void write_wrapped_line(std::ostream& out, const std::string& line, size_t width, size_t hang,
                        bool shorten) {
  const std::string text = shorten ? shorten_paths(line, width) : line;
  if (display_width(text) <= width) {
    out << text << '\n';
    return;
  }
  const size_t indent =
      text.find_first_not_of(' ') == std::string::npos ? 0 : text.find_first_not_of(' ');
  const std::string first_indent(indent, ' '), next_indent(indent + hang, ' ');
  const size_t room = width > indent + hang + 20 ? width - indent - hang : 20;
  // The first line may use the hang's columns too; wrapping all at one width keeps it simple.
  const std::vector<std::string> lines = wrap_text(text.substr(indent), room, shorten);
  for (size_t i = 0; i < lines.size(); ++i)
    out << (i == 0 ? first_indent : next_indent) << lines[i] << '\n';
}

}  // namespace lockscope
