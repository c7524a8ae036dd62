#include "report/findings_text.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "analysis/diagnosis/rule_table.h"
#include "analysis/duration_format.h"
#include "analysis/lock_names.h"
#include "report/location_text.h"
#include "report/text_table.h"

namespace lockscope {
namespace {

// A finding's lines, each with how much it matters: what cannot go (the title, the lock, the
// first site, the first line of figures, the advice) and what can when the screen is full.
struct BlockLine {
  std::string text;
  bool essential = true;
  size_t field = 0;  // the lines of one field (wrapped) share it
};

constexpr size_t kFieldIndent = 9;  // "   lock  " / "   at    " / "   facts " / "   do    "
constexpr size_t kTitleLines = 2, kLockLines = 2, kSiteLines = 2, kFactLines = 3, kAdviceLines = 2;
constexpr size_t kSitesShown = 2, kLocksNamed = 2;

// `text` wrapped to `width`, at most `max_lines` lines, the last one ending in "…" when cut.
std::vector<std::string> wrap_capped(const std::string& text, size_t width, size_t max_lines) {
  std::vector<std::string> lines = wrap_text(text, width);
  if (lines.size() > max_lines) {
    lines.resize(max_lines);
    lines.back() = cut_end(lines.back() + " …", width);
    if (!lines.back().ends_with("…")) lines.back() += "…";
  }
  return lines;
}

// "   lock  mutex account_a", continuation lines under the text. A name or a code location
// (`location`) first loses its paths' leading directories where that keeps it on one line.
void add_field(std::vector<BlockLine>& block, const std::string& label, const std::string& text,
               size_t max_lines, size_t essential_lines, bool location = false) {
  const size_t width = kFirstScreenWidth - kFieldIndent;
  const std::vector<std::string> lines =
      wrap_capped(location ? shorten_paths(text, width) : text, width, max_lines);
  const size_t field = block.empty() ? 1 : block.back().field + 1;
  for (size_t i = 0; i < lines.size(); ++i)
    block.push_back(
        {fmt::format("   {:<6}{}", i == 0 ? label : "", lines[i]), i < essential_lines, field});
}

// A lock as the finding names it: its phrase ("mutex first taken at serve_requests x.cpp:83"),
// the address's last digits where locks share its name, its pid when the profile has several
// processes.
std::string lock_text(const ProfileViews& views, const FindingLock& which) {
  const LockSummary& lock = views.lock(which);
  std::string text = lock_name_phrase(lock);
  if (which.process < views.processes().size()) {
    const auto& tags = views.processes()[which.process].name_tags;
    if (auto tag = tags.find(which.lock); tag != tags.end()) text += " " + tag->second;
  }
  if (views.profile().processes.size() > 1)
    text += fmt::format(" in pid {}", views.profile().processes[which.process].pid);
  return text;
}

// The figures a finding rests on, joined; those its title already says are not repeated.
std::string facts_text(const Finding& finding) {
  std::string text;
  for (const Evidence& evidence : finding.evidence) {
    if (evidence.text.empty() || finding.title.find(evidence.text) != std::string::npos) continue;
    text += (text.empty() ? "" : "; ") + evidence.text;
  }
  return text;
}

std::vector<BlockLine> finding_block(const ProfileViews& views, const Finding& finding,
                                     size_t number) {
  std::vector<BlockLine> block;
  const std::string head = fmt::format("{}. ", number);
  const std::vector<std::string> titles =
      wrap_capped(finding.title, kFirstScreenWidth - head.size(), kTitleLines);
  for (size_t i = 0; i < titles.size(); ++i)
    block.push_back({(i == 0 ? head : std::string(head.size(), ' ')) + titles[i], true, 0});
  // Each lock and site a line of its own (two at most), the first one essential.
  for (size_t i = 0; i < finding.locks.size() && i < kLocksNamed; ++i) {
    std::string lock = (i ? "and " : "") + lock_text(views, finding.locks[i]);
    if (i + 1 == kLocksNamed && finding.locks.size() > kLocksNamed)
      lock += fmt::format(" (and {} more)", finding.locks.size() - kLocksNamed);
    add_field(block, i == 0 ? "lock" : "", lock, kLockLines, i == 0 ? kLockLines : 0, true);
  }
  for (size_t i = 0; i < finding.sites.size() && i < kSitesShown; ++i) {
    std::string site = location_text(finding.sites[i]);
    if (i + 1 == kSitesShown && finding.sites.size() > kSitesShown)
      site += fmt::format(" (and {} more)", finding.sites.size() - kSitesShown);
    add_field(block, i == 0 ? "at" : "", site, kSiteLines, i == 0 ? kSiteLines : 0, true);
  }
  // What it cost first (the rank), with the rule that found it, then the figures behind it.
  std::string facts =
      fmt::format("{} at stake ({}, {})", format_duration_ns(double(finding.time_at_stake_ns)),
                  finding.rule, severity_name(finding.severity));
  if (const std::string figures = facts_text(finding); !figures.empty()) facts += "; " + figures;
  add_field(block, "facts", facts, kFactLines, 1);
  if (!finding.advice.empty()) add_field(block, "do", finding.advice, kAdviceLines, kAdviceLines);
  return block;
}

// The verdict: its title, and the figures behind it (no lock line: they name its top lock).
std::vector<std::string> verdict_lines(const Finding& verdict) {
  const std::string head = "verdict: ";
  std::vector<std::string> lines;
  for (const std::string& line :
       wrap_capped(verdict.title, kFirstScreenWidth - head.size(), kTitleLines))
    lines.push_back((lines.empty() ? head : std::string(head.size(), ' ')) + line);
  // A line (or two) for each figure: the verdict's are few, and its last names the top lock.
  for (const Evidence& evidence : verdict.evidence) {
    if (evidence.text.empty() || verdict.title.find(evidence.text) != std::string::npos) continue;
    for (const std::string& line : wrap_capped(evidence.text, kFirstScreenWidth - head.size(), 2))
      lines.push_back(std::string(head.size(), ' ') + line);
  }
  return lines;
}

// Drops a block's inessential lines, from the last, until it has `room` lines or only essential
// ones; a field that lost lines ends its last one with "…".
void trim_block(std::vector<BlockLine>& block, size_t room) {
  for (size_t i = block.size(); i-- > 0 && block.size() > room;) {
    if (block[i].essential) continue;
    const size_t field = block[i].field;
    block.erase(block.begin() + static_cast<std::ptrdiff_t>(i));
    if (i > 0 && block[i - 1].field == field && !block[i - 1].text.ends_with("…"))
      block[i - 1].text = cut_end(block[i - 1].text + " …", kFirstScreenWidth);
  }
}

bool starts_with_verdict(const std::vector<Finding>& findings) {
  return !findings.empty() && findings.front().rule == "verdict";
}

}  // namespace

size_t write_first_screen(const ProfileViews& views, const std::vector<Finding>& findings,
                          const std::string& heading, bool brief, std::ostream& out) {
  std::vector<std::string> lines = wrap_capped(heading, kFirstScreenWidth, 2);
  lines.push_back("");
  const size_t first = starts_with_verdict(findings) ? 1 : 0;
  if (first == 1) {
    for (std::string& line : verdict_lines(findings.front())) lines.push_back(std::move(line));
    lines.push_back("");
  }
  const size_t others = findings.size() - first;
  size_t shown = 0;
  for (size_t f = first; f < findings.size() && shown < kFirstScreenFindings; ++f) {
    std::vector<BlockLine> block = finding_block(views, findings[f], shown + 1);
    // A line for the block's blank and one for the closing line, when findings are left out.
    const size_t used = lines.size() + 2;
    const size_t room = kFirstScreenLines > used ? kFirstScreenLines - used : 0;
    trim_block(block, room);
    if (block.size() > room) break;
    for (BlockLine& line : block) lines.push_back(std::move(line.text));
    lines.push_back("");
    ++shown;
  }
  const size_t left_out = others - shown;
  if (others == 0)
    lines.push_back(fmt::format("no finding beyond the verdict ({} rule{} run)",
                                rule_table().size(), rule_table().size() == 1 ? "" : "s"));
  else if (left_out > 0)
    lines.push_back(fmt::format(
        "{} more finding{}: {}", left_out, left_out == 1 ? "" : "s",
        brief ? "the report without --brief lists them" : "listed under \"more findings\" below"));
  else if (lines.back().empty())
    lines.pop_back();
  for (const std::string& line : lines) out << line << '\n';
  if (!brief) out << '\n';  // before the tables; --brief ends with the screen's last line
  return left_out;
}

void write_more_findings(const ProfileViews& views, const std::vector<Finding>& findings,
                         size_t left_out, std::ostream& out) {
  if (left_out == 0) return;
  out << fmt::format("*** more findings: {} ***\n", left_out);
  const size_t first = starts_with_verdict(findings) ? 1 : 0;
  for (size_t f = findings.size() - left_out; f < findings.size(); ++f) {
    for (const BlockLine& line : finding_block(views, findings[f], f - first + 1))
      out << line.text << '\n';
    out << '\n';
  }
}

}  // namespace lockscope
