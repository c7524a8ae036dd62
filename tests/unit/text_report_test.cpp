// The text report as a whole (make_text_report_writer, report/report_writer.h).
#include <gtest/gtest.h>

#include <sstream>

#include "report/report_writer.h"

namespace lockscope {
namespace {

// A program that took no lock: the locks table says so, rather than a header over nothing.
TEST(TextReport, NoLockTakenSaysSoInsteadOfAnEmptyTable) {
  Profile profile;
  profile.processes.emplace_back();
  profile.processes[0].pid = 7;
  profile.processes[0].executable = "/bin/true";
  std::ostringstream out;
  make_text_report_writer()->write(profile, ReportOptions{}, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("*** locks present: none (the program took no lock while profiled) ***"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("0 of 0"), std::string::npos) << text;
}

}  // namespace
}  // namespace lockscope
