#include "report/sarif_report.h"

#include <fmt/core.h>

#include <cmath>

#include "analysis/diagnosis/rule_table.h"
#include "analysis/lock_names.h"
#include "report/evidence_json.h"
#include "report/json_writer.h"
#include "report/report_writer.h"

#ifndef LOCKSCOPE_VERSION
#define LOCKSCOPE_VERSION "unknown"
#endif

namespace lockscope {
namespace {

// The schema's address as SARIF 2.1.0's errata publish it (what validators and GitHub expect).
constexpr const char* kSarifSchema = "https://json.schemastore.org/sarif-2.1.0.json";

bool unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

// A location SARIF can point at: a source line of a file. Sites that debug info did not resolve to
// one (a module and offset only) are left out: a code-scanning view can show nothing for them.
bool has_source_line(const CodeLocation& site) {
  return !site.file.empty() && site.line > 0;
}

void physical_location(JsonWriter& w, const CodeLocation& site) {
  w.object("physicalLocation")
      .object("artifactLocation")
      .field("uri", sarif_uri(site.file))
      .end_object()
      .object("region")
      .field("startLine", site.line)
      .end_object()
      .end_object();
}

// A table's phrase as a sentence of a paragraph: with its full stop.
std::string sentence(std::string_view phrase) {
  std::string text(phrase);
  if (!text.empty() && text.back() != '.') text += '.';
  return text;
}

// tool.driver.rules: every rule of the table, so that a result's ruleIndex finds its row.
void rules_field(JsonWriter& w) {
  w.array("rules");
  for (const Rule& rule : rule_table()) {
    w.begin_object()
        .field("id", rule.id)
        .object("shortDescription")
        .field("text", rule.title)
        .end_object()
        .object("fullDescription")
        .field("text", rule.detects)
        .end_object()
        .object("help")
        .field("text", sentence(rule.advice) + " Thresholds: " + sentence(rule.thresholds) +
                           " Evidence: " + sentence(rule.evidence))
        .end_object()
        .end_object();
  }
  w.end_array();
}

size_t rule_index(std::string_view id) {
  const std::vector<Rule>& rules = rule_table();
  for (size_t i = 0; i < rules.size(); ++i)
    if (rules[i].id == id) return i;
  return rules.size();
}

void result_value(JsonWriter& w, const ProfileViews& views, const Finding& finding) {
  w.begin_object().field("ruleId", finding.rule);
  if (const size_t index = rule_index(finding.rule); index < rule_table().size())
    w.field("ruleIndex", index);
  w.field("level", severity_name(finding.severity))
      .object("message")
      .field("text", finding.advice.empty() ? finding.title
                                            : sentence(finding.title) + " " + finding.advice)
      .end_object();
  std::vector<const CodeLocation*> lines;
  for (const CodeLocation& site : finding.sites)
    if (has_source_line(site)) lines.push_back(&site);
  if (!lines.empty()) {
    w.array("locations").begin_object();
    physical_location(w, *lines.front());
    w.object("message").field("text", lines.front()->label).end_object().end_object().end_array();
  }
  if (lines.size() > 1) {
    w.array("relatedLocations");
    for (size_t i = 1; i < lines.size(); ++i) {
      w.begin_object().field("id", i);
      physical_location(w, *lines[i]);
      w.object("message").field("text", lines[i]->label).end_object().end_object();
    }
    w.end_array();
  }
  w.object("properties").array("locks");
  for (const FindingLock& at : finding.locks) {
    const LockSummary& lock = views.lock(at);
    w.begin_object()
        .field("pid", views.profile().processes[at.process].pid)
        .field("name", lock_name(lock))
        .field("name_source", lock_name_source_name(lock.name_source))
        .field("address", lock.address)
        .field("generation", lock.generation)
        .end_object();
  }
  w.end_array();
  evidence_array(w, "evidence", finding.evidence);
  w.field("time_at_stake_ns", finding.time_at_stake_ns).end_object().end_object();
}

class SarifReportWriter final : public ReportWriter {
 public:
  using ReportWriter::write;
  void write(const ProfileViews& views, const ReportOptions&, ReportSink& sink) override {
    write_sarif_log(views, views.findings(), sink.stream());
  }
};

}  // namespace

std::string sarif_uri(const std::string& path) {
  std::string uri = path.starts_with('/') ? "file://" : "";
  for (unsigned char c : path)
    if (unreserved(c) || c == '/')
      uri += static_cast<char>(c);
    else
      uri += fmt::format("%{:02X}", c);
  return uri;
}

void write_sarif_log(const ProfileViews& views, const std::vector<Finding>& findings,
                     std::ostream& out) {
  JsonWriter w(out, {.indent = 2});
  w.begin_object()
      .field("$schema", kSarifSchema)
      .field("version", "2.1.0")
      .array("runs")
      .begin_object()
      .object("tool")
      .object("driver")
      .field("name", "lockscope")
      .field("version", LOCKSCOPE_VERSION)
      .field("semanticVersion", LOCKSCOPE_VERSION);
  rules_field(w);
  w.end_object().end_object().array("results");
  for (const Finding& finding : findings) result_value(w, views, finding);
  w.end_array()
      .object("properties")
      .field("directory", views.profile().directory)
      .end_object()
      .end_object()
      .end_array()
      .end_object();
  w.finish();
  out << '\n';
}

std::unique_ptr<ReportWriter> make_sarif_report_writer() {
  return std::make_unique<SarifReportWriter>();
}

}  // namespace lockscope
