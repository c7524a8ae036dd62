// The html report of real profiles, opened in Debian's headless Chromium (the `chromium` package,
// which scripts/install-dependencies.sh --test installs: a missing one fails the test): the DOM
// the page's scripts render holds the wrapped_locks fixture's frames in the flame graph, its lock
// in the locks table with a drawn histogram, its waits in the blame table, and a traced run's
// timeline its waits and holds; the page reports no error of its own (its error trap, and
// Chromium's console log); and a screenshot shows the verdict drawn. The page is read without its
// <script> elements, so a name counts only where the page drew it, not where its data carries it.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "analysis/lock_names.h"
#include "analysis/profile_views.h"
#include "integration/chromium_page.h"
#include "lockscope_harness.h"
#include "png_pixels.h"

namespace lockscope::testing {
namespace {

// The part of the dumped page from the element with `id` to the next section.
std::string section(const std::string& dom, const std::string& id) {
  const size_t begin = dom.find("id=\"" + id + "\"");
  if (begin == std::string::npos) return "";
  return dom.substr(begin, dom.find("<section", begin) - begin);
}

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

std::string write_html(const TemporaryDirectory& dir) {
  const CommandResult run = run_lockscope({"report", dir.path(), "-o", dir / "x.html"});
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_TRUE(run.out.empty());
  return dir / "x.html";
}

void expect_no_page_errors(const ChromiumPage& run) {
  EXPECT_EQ(run.errors, "");
  for (const std::string& line : run.console) ADD_FAILURE() << "console: " << line;
}

TEST(HtmlReport, ChromiumDrawsTheFlameGraphLocksAndBlameOfWrappedLocks) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "wrapped_locks", {"100"});
  const FoundSite waits = find_site(process, "wrapped_locks", "level3", format::Operation::kLock);
  ASSERT_NE(waits.site, nullptr);
  ASSERT_FALSE(waits.site->stacks.empty());
  const std::vector<CodeLocation>& stack = process.stacks.at(waits.site->stacks.front().stack);
  expect_wrapped_locks_stack(stack, "level3");
  const ChromiumPage run = open_in_headless_chromium(write_html(dir), {"--dump-dom"});
  expect_no_page_errors(run);
  // The flame graph's frames, each drawn as a label: the lock, the call site, the three
  // wrappers' calls and the thread function.
  const std::string flame = section(run.dom, "flame");
  // A global mutex: named by its symbol.
  EXPECT_EQ(waits.lock->name, "shared");
  const std::string lock = "mutex shared";
  EXPECT_NE(flame.find("<svg"), std::string::npos) << flame.substr(0, 2000);
  for (const std::string& name :
       {lock, stack[0].label, stack[1].label, stack[2].label, stack[3].label})
    EXPECT_NE(flame.find(">" + name + "</div>"), std::string::npos) << name << "\n"
                                                                    << flame.substr(0, 4000);
  EXPECT_NE(flame.find(fmt::format("pid {} (fixture_wrapped_locks)", process.pid)),
            std::string::npos);
  // The lock's row, with its waits drawn: a bar per bucket of its contended waits.
  const std::string locks = section(run.dom, "locks");
  EXPECT_NE(locks.find(fmt::format(">{}/0x{:x}</td>", process.pid, waits.lock->address)),
            std::string::npos)
      << locks.substr(0, 3000);
  EXPECT_EQ(count(locks, "<rect class=\"bar\""), waits.lock->waits_only.bins().size());
  EXPECT_GT(waits.lock->waits_only.bins().size(), 0u);
  // Blame: the waits at level3 behind holds taken at level3, with the waiter's stack.
  const std::string blame = section(run.dom, "blame");
  EXPECT_GE(count(blame, "<td class=\"frames\">"), 2u) << blame.substr(0, 3000);
  EXPECT_NE(blame.find("<summary>" + stack[0].label), std::string::npos) << blame.substr(0, 3000);
  EXPECT_NE(blame.find("<li>" + stack[2].label + "</li>"), std::string::npos);
  // Not traced: the timeline says so.
  EXPECT_NE(section(run.dom, "timeline").find("recorded without --trace"), std::string::npos);
}

// The colour a custom property of the page's stylesheet sets: "--wait: #d1495b;" gives 0xd1495b.
uint32_t css_colour(const std::string& html, const std::string& property) {
  const size_t at = html.find(property + ": #");
  if (at == std::string::npos) {
    ADD_FAILURE() << "no " << property << " in the page's stylesheet";
    return 0x1000000;  // no pixel has it
  }
  return uint32_t(std::stoul(html.substr(at + property.size() + 3, 6), nullptr, 16));
}

// The screenshot shows the page drawn, not only a PNG of the right size: the header band in the
// band colour, and below it the verdict drawn in the colours its severity (from this profile's
// findings) gives it in report.css — its title's text, and its box's 4-px left border, a vertical
// run of that colour no table rule or flame-graph frame makes. Colours are compared exactly:
// headless Chromium draws sRGB as given.
TEST(HtmlReport, ChromiumTakesAScreenshotOfTheVerdictDrawn) {
  TemporaryDirectory dir;
  record_unchanged(dir, "wrapped_locks", {"50"});
  const std::string png = dir / "x.png";
  const std::string page = write_html(dir);
  const ChromiumPage run =
      open_in_headless_chromium(page, {"--screenshot=" + png, "--window-size=1280,900"});
  expect_no_page_errors(run);
  const PngPixels shot = decode_png(slurp(png));
  ASSERT_EQ(shot.error, "");
  ASSERT_EQ(shot.width, 1280u);  // IHDR
  ASSERT_EQ(shot.height, 900u);

  const std::string html = slurp(page);
  const Finding verdict = ProfileViews(load_profile(dir.path())).findings().at(0);
  ASSERT_EQ(verdict.rule, "verdict");
  const bool note = verdict.severity == Severity::kNote;
  const uint32_t title = css_colour(html, note ? "--ink" : "--wait");
  const uint32_t border = css_colour(html, note                                   ? "--rule"
                                           : verdict.severity == Severity::kError ? "--wait"
                                                                                  : "--code");
  const uint32_t band = css_colour(html, "--band");

  constexpr uint32_t kX = 640;  // the middle of the page, left of the scroll bar
  uint32_t band_end = 0;
  while (band_end < shot.height && shot.at(kX, band_end) == band) ++band_end;
  EXPECT_GE(band_end, 40u) << "the header band is not drawn in " << std::hex << band;
  // The findings come first: the verdict lies within 500 rows under the band.
  const uint32_t area_end = std::min(shot.height, band_end + 500);
  size_t title_pixels = 0;
  uint32_t longest_border_run = 0;
  for (uint32_t x = 0; x < shot.width; ++x) {
    uint32_t run_length = 0;
    for (uint32_t y = band_end; y < area_end; ++y) {
      const uint32_t pixel = shot.at(x, y);
      title_pixels += pixel == title;
      run_length = pixel == border ? run_length + 1 : 0;
      longest_border_run = std::max(longest_border_run, run_length);
    }
  }
  EXPECT_GE(title_pixels, 200u) << "the verdict's title (\"" << verdict.title
                                << "\") is not drawn in " << std::hex << title;
  EXPECT_GE(longest_border_run, 40u)
      << "no left border of the verdict's box in " << std::hex << border;
}

// lock_names_formats: the page opens on the findings, the verdict first (its title, the lock it
// names by its first use, its evidence); the locks table names the global by its symbol.
TEST(HtmlReport, ChromiumShowsTheFindingsFirstAndEveryLockByName) {
  TemporaryDirectory dir;
  record_unchanged(dir, "lock_names_formats");
  const Profile profile = load_profile(dir.path());
  const ProfileViews views(profile);
  const Finding& verdict = views.findings().at(0);
  ASSERT_EQ(verdict.rule, "verdict");
  ASSERT_EQ(verdict.locks.size(), 1u);
  const LockSummary& top = views.lock(verdict.locks[0]);
  EXPECT_EQ(top.name_source, LockNameSource::kCaller);  // the heap std::mutex, by its waiter
  const ChromiumPage run = open_in_headless_chromium(write_html(dir), {"--dump-dom"});
  expect_no_page_errors(run);
  EXPECT_LT(run.dom.find("id=\"findings\""), run.dom.find("id=\"flame\""));
  const std::string findings = section(run.dom, "findings");
  EXPECT_NE(findings.find(">" + verdict.title + "</p>"), std::string::npos)
      << findings.substr(0, 3000);
  EXPECT_NE(findings.find("<dd>" + lock_name_phrase(top) + "</dd>"), std::string::npos)
      << findings.substr(0, 3000);
  for (const Evidence& evidence : verdict.evidence)
    EXPECT_NE(findings.find("<dd>" + evidence.text + "</dd>"), std::string::npos) << evidence.text;
  const std::string locks = section(run.dom, "locks");
  EXPECT_NE(locks.find(">NAME</th>"), std::string::npos) << locks.substr(0, 2000);
  EXPECT_NE(locks.find(">account_a</td>"), std::string::npos) << locks.substr(0, 3000);
  EXPECT_NE(locks.find(">" + top.name + "</td>"), std::string::npos) << locks.substr(0, 3000);
}

// condvar_wakeups: the page lists the mutexes in the locks table and the condition variable in
// its own table after it, as the text report does, never in both.
TEST(HtmlReport, ChromiumListsConditionVariablesApartFromTheLocks) {
  TemporaryDirectory dir;
  const ProcessProfile process = record_unchanged(dir, "condvar_wakeups", {"20"});
  const ChromiumPage run = open_in_headless_chromium(write_html(dir), {"--dump-dom"});
  expect_no_page_errors(run);
  const std::string locks = section(run.dom, "locks");
  const std::string others = section(run.dom, "others");
  size_t mutexes = 0, condvars = 0;
  for (const LockSummary& lock : process.locks) {
    if (lock.sites.empty()) continue;
    const std::string cell = fmt::format(">{}/0x{:x}</td>", process.pid, lock.address);
    if (lock.primitive == format::Primitive::kCondVar) {
      ++condvars;
      EXPECT_NE(others.find(cell), std::string::npos) << cell << others.substr(0, 3000);
      EXPECT_EQ(locks.find(cell), std::string::npos) << cell;
    } else if (lock.primitive == format::Primitive::kMutex) {
      ++mutexes;
      EXPECT_NE(locks.find(cell), std::string::npos) << cell << locks.substr(0, 3000);
      EXPECT_EQ(others.find(cell), std::string::npos) << cell;
    }
  }
  EXPECT_GE(condvars, 1u);
  EXPECT_GE(mutexes, 1u);
}

// sleepy_holder 20: the waiter waits 20 times for the main thread's 2 ms holds; both threads hold
// the mutex 20 times.
TEST(HtmlReport, ChromiumDrawsATracedTimelineOfWaitsAgainstHolds) {
  TemporaryDirectory dir;
  const ProcessProfile process =
      record_unchanged(dir, "sleepy_holder", {"20"}, {"--trace", "--hold-sample", "1"});
  ASSERT_TRUE(process.trace.present);
  const FoundSite wait =
      find_site(process, "sleepy_holder", "waiter-lock", format::Operation::kLock);
  ASSERT_NE(wait.lock, nullptr);
  const ChromiumPage run = open_in_headless_chromium(write_html(dir), {"--dump-dom"});
  expect_no_page_errors(run);
  const std::string timeline = section(run.dom, "timeline");
  EXPECT_NE(timeline.find("<svg class=\"timeline\""), std::string::npos)
      << timeline.substr(0, 3000);
  EXPECT_EQ(wait.lock->name, "slow_mutex");  // its symbol
  const std::string lock = "mutex " + wait.lock->name;
  EXPECT_EQ(count(timeline, "<title>waited for " + lock + ": "), 20u) << timeline.substr(0, 3000);
  EXPECT_EQ(count(timeline, "<title>held " + lock + ": "), 40u);
  EXPECT_EQ(count(timeline, "<rect class=\"wait\""), 20u);
  EXPECT_GE(count(timeline, "<rect class=\"hold\""), 40u);
  for (const ThreadSummary& thread : process.threads)
    EXPECT_NE(timeline.find(fmt::format("({})</text>", thread.tid)), std::string::npos)
        << thread.tid;
}

// The checks above can fail: a page whose script throws is caught by its own trap and by the
// console log.
TEST(HtmlReport, ChromiumCheckSeesAPageThatFails) {
  TemporaryDirectory dir;
  record_unchanged(dir, "wrapped_locks", {"20"});
  std::string page = slurp(write_html(dir));
  const std::string data = R"(<script type="application/json" id="lockscope-data">)";
  const size_t at = page.find(data);
  ASSERT_NE(at, std::string::npos);
  page.insert(at + data.size(), "{");  // the data no longer parses
  std::ofstream(dir / "broken.html", std::ios::binary) << page;
  const ChromiumPage run = open_in_headless_chromium(dir / "broken.html", {"--dump-dom"});
  EXPECT_NE(run.errors.find("error: "), std::string::npos) << run.errors;
  EXPECT_FALSE(run.console.empty()) << run.chromium.err;
}

}  // namespace
}  // namespace lockscope::testing
