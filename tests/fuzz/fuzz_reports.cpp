// libFuzzer target: everything `lockscope report` does with a directory, in every format. The
// input's profile gets its checksums and sizes fixed up (fuzz_input.h) before it is written, so
// the fuzzer's mutations of records, references, strings and trace events reach the decoder,
// the symbolizer, the views and the writers. A writer may refuse a profile the way the CLI turns
// into a one-line error (std::invalid_argument: the chrome format without a trace) or fail on its
// file (ReportSinkError); any other exception escapes and is a finding, as a crash, a hang or a
// read outside what it was given are.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "analysis/profile_reader.h"
#include "analysis/profile_symbolization.h"
#include "analysis/utf8_repair.h"
#include "analysis/wait_attribution.h"
#include "fuzz_input.h"
#include "report/report_writer.h"

namespace {

using namespace lockscope;

// The option combinations the writers branch on.
std::vector<ReportOptions> option_sets() {
  ReportOptions plain;
  ReportOptions every = plain;
  every.all = true;
  every.sort_key = "handoffs";
  every.top = 1;
  every.weight = StackWeight::kHold;
  every.table = "sites";
  std::string error;
  every.attribution = make_wait_attribution_rule(2, "^take", error);
  return {plain, every};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::ScratchDirectory scratch;
  static const std::vector<ReportOptions> options = option_sets();
  fuzz::InputFiles files = fuzz::split_input(data, size);
  fuzz::fix_checksums(files.profile);
  scratch.write(files);
  Profile profile = read_profile_directory(scratch.path().string());
  if (profile.processes.empty()) return 0;
  symbolize_profile(profile);
  repair_profile_strings(profile);
  for (const ReportFormat& format : report_format_table())
    for (const ReportOptions& option : options) {
      const std::string path = (scratch.path() / ("report." + format.name)).string();
      try {
        std::unique_ptr<ReportWriter> writer = format.make();
        ReportSink sink(path);
        writer->write(profile, option, sink);
        sink.finish();
      } catch (const std::invalid_argument&) {  // refused, with the reason the CLI prints
      } catch (const ReportSinkError&) {        // the file (the disk full)
      }
    }
  return 0;
}
