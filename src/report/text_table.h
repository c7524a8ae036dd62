// A plain-text table: columns sized to their widest cell (UTF-8 aware), numbers right-aligned.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace lockscope {

class TextTable {
 public:
  void set_header(std::vector<std::string> header, std::vector<bool> left_aligned);
  void add_row(std::vector<std::string> cells);
  void write(std::ostream& out, const std::string& indent = "") const;
  bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> header_;
  std::vector<bool> left_aligned_;
  std::vector<std::vector<std::string>> rows_;
};

size_t display_width(const std::string& text);

}  // namespace lockscope
