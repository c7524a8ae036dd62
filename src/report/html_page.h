// The html report's page: one self-contained file, its template (src/report/html/) and the
// vendored libraries it inlines (third_party/web/: d3, d3-flame-graph) built into the binary, so
// the page needs no network and the build no node or npm.
//
// The template is the page with placeholders `@@NAME@@`: NAME is an embedded file, written as it
// is (the page's script and stylesheet, a vendored library inside its <script>), or "data", the
// report's JSON, the page's only input. The page draws everything from that JSON with text nodes
// (never markup made from it), and the JSON inside its <script type="application/json"> is
// escaped so that no name in it can end the element: every '<', '>' and '&' is written \u003c,
// \u003e, \u0026 (they only ever occur inside JSON strings, where the escapes mean the same).
#pragma once

#include <functional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

namespace lockscope {

// A file built into the binary by cmake/embed_files.cmake: its text in chunks (a literal each).
struct EmbeddedFile {
  std::string_view name;  // the file's name, without its directory
  std::span<const std::string_view> chunks;
  std::string text() const;
};

namespace html {
// The page's files: the template (report.html), its script and stylesheet, the vendored
// libraries (d3.min.js, d3-flamegraph.umd.min.js). Defined by the generated embedded_html.cpp.
std::span<const EmbeddedFile> embedded_files();
}  // namespace html

// The embedded file named `name`; throws std::logic_error when there is none (a build mistake).
const EmbeddedFile& html_file(std::string_view name);

class JsonWriter;

// The page of report.html with the JSON document that `write_data` writes as its input: compact,
// strings that are not UTF-8 written with U+FFFD, '<', '>' and '&' escaped (JsonWriter's
// script_safe style).
void write_html_page(std::ostream& out, const std::function<void(JsonWriter&)>& write_data);
// The same with another template of the embedded files: `lockscope diff -f html`'s diff.html.
void write_html_page(std::ostream& out, std::string_view page_name,
                     const std::function<void(JsonWriter&)>& write_data);

}  // namespace lockscope
