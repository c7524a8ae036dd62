#include "report/html_page.h"

#include <stdexcept>

#include "report/json_writer.h"

namespace lockscope {

std::string EmbeddedFile::text() const {
  size_t size = 0;
  for (std::string_view chunk : chunks) size += chunk.size();
  std::string out;
  out.reserve(size);
  for (std::string_view chunk : chunks) out += chunk;
  return out;
}

const EmbeddedFile& html_file(std::string_view name) {
  for (const EmbeddedFile& file : html::embedded_files())
    if (file.name == name) return file;
  throw std::logic_error("the html report's file " + std::string(name) + " is not built in");
}

void write_html_page(std::ostream& out, const std::function<void(JsonWriter&)>& write_data) {
  write_html_page(out, "report.html", write_data);
}

void write_html_page(std::ostream& out, std::string_view page_name,
                     const std::function<void(JsonWriter&)>& write_data) {
  const std::string page = html_file(page_name).text();
  constexpr std::string_view kMark = "@@";
  size_t at = 0;
  while (true) {
    const size_t open = page.find(kMark, at);
    const size_t close = open == std::string::npos ? open : page.find(kMark, open + kMark.size());
    if (close == std::string::npos) {
      out.write(page.data() + at, std::streamsize(page.size() - at));
      return;
    }
    out.write(page.data() + at, std::streamsize(open - at));
    const std::string_view name(page.data() + open + kMark.size(), close - open - kMark.size());
    if (name == "data") {
      JsonWriter writer(out, {.indent = -1, .script_safe = true});
      write_data(writer);
      writer.finish();
    } else {
      for (std::string_view chunk : html_file(name).chunks)
        out.write(chunk.data(), std::streamsize(chunk.size()));
    }
    at = close + kMark.size();
  }
}

}  // namespace lockscope
