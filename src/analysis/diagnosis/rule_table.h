// The diagnosis rules: one row of one table each, as the report's columns and counters are. A row
// says what the rule detects, its thresholds (named constants next to their detector, each with
// where it comes from), what it advises and the evidence it cites; docs/cli.md lists the same.
// diagnose() runs every row over the views and ranks what they find.
#pragma once

#include <string_view>
#include <vector>

#include "analysis/diagnosis/finding.h"

namespace lockscope {

class ProfileViews;

struct Rule {
  std::string_view id;          // the JSON contract's rule id
  std::string_view title;       // a few words
  std::string_view detects;     // one sentence
  std::string_view thresholds;  // the numbers that trigger it, and their source
  std::string_view advice;      // what its findings tell the user to do
  std::string_view evidence;    // the figures its findings cite
  // Appends this rule's findings over `views` (every process of the profile).
  void (*detect)(const ProfileViews& views, std::vector<Finding>& findings);
};

// Every rule, "verdict" first.
const std::vector<Rule>& rule_table();
const Rule* find_rule(std::string_view id);

// Every rule's findings: the verdict first, then the defects (severity error), then by time at
// stake (most first; ties by rule order then lock), so that the first five are what to look at.
// A serial-bottleneck finding on a lock that another rule's finding names is left out.
std::vector<Finding> diagnose(const ProfileViews& views);

// The detectors, one per rule; each lives in the file of its family (rules_*.cpp).
void detect_verdict(const ProfileViews& views, std::vector<Finding>& findings);

// The contention family: contention_rules.cpp, placement_rules.cpp.
void detect_serial_bottleneck(const ProfileViews& views, std::vector<Finding>& findings);
void detect_long_hold(const ProfileViews& views, std::vector<Finding>& findings);
void detect_hot_lock(const ProfileViews& views, std::vector<Finding>& findings);
void detect_handoff_storm(const ProfileViews& views, std::vector<Finding>& findings);
void detect_asymmetric_contention(const ProfileViews& views, std::vector<Finding>& findings);
void detect_oversubscribed(const ProfileViews& views, std::vector<Finding>& findings);
void detect_false_sharing(const ProfileViews& views, std::vector<Finding>& findings);
// The event rules: primitive_rules.cpp, wakeup_rules.cpp, deadlock_rules.cpp.
void detect_spin_burn(const ProfileViews& views, std::vector<Finding>& findings);
void detect_lost_signals(const ProfileViews& views, std::vector<Finding>& findings);
void detect_thundering_herd(const ProfileViews& views, std::vector<Finding>& findings);
void detect_rwlock_write_heavy(const ProfileViews& views, std::vector<Finding>& findings);
void detect_priority_inversion(const ProfileViews& views, std::vector<Finding>& findings);
void detect_lock_order_inversion(const ProfileViews& views, std::vector<Finding>& findings);
void detect_deadlock(const ProfileViews& views, std::vector<Finding>& findings);

}  // namespace lockscope
