#include "integration/chromium_page.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

namespace lockscope::testing {

std::string page_without_scripts(std::string dom) {
  for (size_t at = dom.find("<script"); at != std::string::npos; at = dom.find("<script", at)) {
    const size_t end = dom.find("</script>", at);
    if (end == std::string::npos) break;
    dom.erase(at, end + std::string_view("</script>").size() - at);
  }
  return dom;
}

ChromiumPage open_in_headless_chromium(const std::string& page,
                                       const std::vector<std::string>& extra) {
  const TemporaryDirectory user_data;
  std::vector<std::string> argv = {"/usr/bin/timeout",
                                   "60",
                                   "/usr/bin/chromium",
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--disable-quic",
                                   "--no-first-run",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-sync",
                                   "--user-data-dir=" + user_data.path(),
                                   "--enable-logging=stderr",
                                   "--v=0",
                                   "--virtual-time-budget=5000"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back("file://" + page);
  ChromiumPage run;
  run.chromium = run_command(argv);
  EXPECT_EQ(run.chromium.exit_status, 0) << "chromium (124: timed out):\n" << run.chromium.err;
  // Chromium logs every console message of a page as "...:CONSOLE:LINE] "text", source: URL".
  std::istringstream log(run.chromium.err);
  for (std::string line; std::getline(log, line);)
    if (line.find(":CONSOLE") != std::string::npos && line.find(page) != std::string::npos)
      run.console.push_back(line);
  run.dom = page_without_scripts(run.chromium.out);
  if (std::find(extra.begin(), extra.end(), "--dump-dom") == extra.end()) return run;
  const std::string trap = "<pre id=\"lockscope-errors\"";
  const size_t at = run.chromium.out.find(trap);
  if (at == std::string::npos) {
    ADD_FAILURE() << "no error trap in the page";
  } else {
    const size_t begin = run.chromium.out.find('>', at) + 1;
    run.errors = run.chromium.out.substr(begin, run.chromium.out.find("</pre>", begin) - begin);
  }
  return run;
}

}  // namespace lockscope::testing
