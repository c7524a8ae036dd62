#include "report/text_table.h"

#include <algorithm>

namespace lockscope {

size_t display_width(const std::string& text) {
  size_t width = 0;
  for (unsigned char c : text)
    if ((c & 0xC0) != 0x80) ++width;  // count code points, not continuation bytes
  return width;
}

void TextTable::set_header(std::vector<std::string> header, std::vector<bool> left_aligned) {
  header_ = std::move(header);
  left_aligned_ = std::move(left_aligned);
}

void TextTable::add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }

void TextTable::write(std::ostream& out, const std::string& indent) const {
  std::vector<size_t> widths(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size() && i < widths.size(); ++i)
      widths[i] = std::max(widths[i], display_width(cells[i]));
  };
  measure(header_);
  for (const auto& row : rows_) measure(row);
  auto emit = [&](const std::vector<std::string>& cells) {
    std::string line = indent;
    for (size_t i = 0; i < widths.size(); ++i) {
      const std::string cell = i < cells.size() ? cells[i] : "";
      const std::string pad(widths[i] - display_width(cell), ' ');
      const bool last = i + 1 == widths.size();
      if (left_aligned_[i]) line += cell + (last ? "" : pad);
      else line += pad + cell;
      if (!last) line += "  ";
    }
    out << line << '\n';
  };
  emit(header_);
  for (const auto& row : rows_) emit(row);
}

}  // namespace lockscope
