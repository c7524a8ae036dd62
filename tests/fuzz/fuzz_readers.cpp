// libFuzzer target: the readers on raw bytes. The input is written as a profile directory
// (fuzz_input.h) and read as `lockscope report` reads one: every profile file and trace file, each
// either decoded or refused with a one-line reason, never a crash, a hang or memory out of
// proportion (the test runs it under -rss_limit_mb and -timeout). Most mutations stop at the
// checksums here; fuzz_reports.cpp fixes those up to get deeper.
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

#include "analysis/profile_reader.h"
#include "analysis/trace_reader.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static lockscope::fuzz::ScratchDirectory scratch;
  const lockscope::fuzz::InputFiles files = lockscope::fuzz::split_input(data, size);
  scratch.write(files);
  const lockscope::Profile profile = lockscope::read_profile_directory(scratch.path().string());
  // Each file read, or named with its problem.
  if (profile.processes.size() + profile.problems.size() < 1) __builtin_trap();
  for (const lockscope::ProfileProblem& problem : profile.problems)
    if (problem.message.empty()) __builtin_trap();
  return 0;
}
