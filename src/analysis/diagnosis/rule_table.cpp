#include "analysis/diagnosis/rule_table.h"

#include <algorithm>

#include "analysis/profile_views.h"

namespace lockscope {

const char* severity_name(Severity severity) {
  switch (severity) {
    case Severity::kNote:
      return "note";
    case Severity::kWarning:
      return "warning";
    case Severity::kError:
      return "error";
  }
  return "note";
}

const std::vector<Rule>& rule_table() {
  static const std::vector<Rule> rules = {
      {"verdict", "how much locks cost",
       "always one finding: the share of thread time lost to lock waits, and whether locks matter "
       "to this program at all",
       "below 1 % of thread time: not a bottleneck; 1-10 %: a cost; 10 % and more: a bottleneck "
       "(kVerdictMinor, kVerdictMajor: verdict_rule.cpp)",
       "none: the findings below it say what to change", "lock wait and thread time, per process",
       detect_verdict},
  };
  return rules;
}

const Rule* find_rule(std::string_view id) {
  for (const Rule& rule : rule_table())
    if (rule.id == id) return &rule;
  return nullptr;
}

std::vector<Finding> diagnose(const ProfileViews& views) {
  std::vector<Finding> findings;
  std::vector<size_t> rule_of;  // each finding's row, for the ranking's ties
  const std::vector<Rule>& rules = rule_table();
  for (size_t row = 0; row < rules.size(); ++row) {
    rules[row].detect(views, findings);
    rule_of.resize(findings.size(), row);
  }
  std::vector<size_t> order(findings.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto first_lock = [&](size_t i) {
    return findings[i].locks.empty() ? FindingLock{SIZE_MAX, SIZE_MAX} : findings[i].locks.front();
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const bool verdict_a = findings[a].rule == "verdict", verdict_b = findings[b].rule == "verdict";
    if (verdict_a != verdict_b) return verdict_a;
    if (findings[a].time_at_stake_ns != findings[b].time_at_stake_ns)
      return findings[a].time_at_stake_ns > findings[b].time_at_stake_ns;
    if (rule_of[a] != rule_of[b]) return rule_of[a] < rule_of[b];
    const FindingLock la = first_lock(a), lb = first_lock(b);
    return la.process != lb.process ? la.process < lb.process : la.lock < lb.lock;
  });
  std::vector<Finding> ranked;
  ranked.reserve(findings.size());
  for (size_t i : order) ranked.push_back(std::move(findings[i]));
  return ranked;
}

}  // namespace lockscope
