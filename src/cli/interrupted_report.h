// `run` once its program has ended: reading, symbolizing and writing the report can take seconds
// (a large program's DWARF, debuginfod's downloads), and a second Ctrl-C then (the first ended the
// program) killed lockscope by SIGINT's default action, silently: no report, and no word of the
// profile that was on disk. While an InterruptedReportNote lives, the signals a terminal or a
// supervisor sends (SIGINT, SIGQUIT, SIGHUP, SIGTERM) end lockscope with one line that says where
// the profile is, and with the program's status, its signal re-raised, as exit_like() would
// (DESIGN.md's convention). Ending is what the user asked for: the report is not worth ignoring a
// second Ctrl-C for, when a debuginfod download may take minutes.
//
// A signal lockscope was started ignoring (a script's `lockscope run -- cmd &` ignores SIGINT and
// SIGQUIT, nohup SIGHUP) stays ignored.
#pragma once

#include <csignal>
#include <iterator>
#include <string>

#include "cli/target_launch.h"

namespace lockscope {

class InterruptedReportNote {
 public:
  InterruptedReportNote(const std::string& directory, const TargetOutcome& outcome);
  ~InterruptedReportNote();  // the dispositions as they were
  InterruptedReportNote(const InterruptedReportNote&) = delete;
  InterruptedReportNote& operator=(const InterruptedReportNote&) = delete;

 private:
  static constexpr int kSignals[] = {SIGINT, SIGQUIT, SIGHUP, SIGTERM};
  struct sigaction previous_[std::size(kSignals)]{};
  bool installed_[std::size(kSignals)] = {};
};

}  // namespace lockscope
