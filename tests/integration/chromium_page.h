// A page opened in Debian's headless Chromium (the `chromium` package, which
// scripts/install-dependencies.sh --test installs: a missing one fails the test), never on the
// network: the DOM its scripts rendered, the text of its own error trap (<pre
// id="lockscope-errors">, which report.html and diff.html install before any other script) and
// its console lines in Chromium's log. As html_report_test.cpp opens the report's page.
#pragma once

#include <string>
#include <vector>

#include "integration/lockscope_harness.h"

namespace lockscope::testing {

struct ChromiumPage {
  CommandResult chromium;
  std::string dom;                   // --dump-dom without its <script> elements
  std::string errors;                // the text of the page's error trap (--dump-dom)
  std::vector<std::string> console;  // the page's console lines in Chromium's log
};

// Chromium on the file `page` with `extra` flags (--dump-dom, --screenshot=...), in a profile
// directory of its own; a failed run is a failed test.
ChromiumPage open_in_headless_chromium(const std::string& page,
                                       const std::vector<std::string>& extra);

// The DOM without its <script> elements: a name counts only where the page drew it, not where its
// data or code carries it.
std::string page_without_scripts(std::string dom);

}  // namespace lockscope::testing
