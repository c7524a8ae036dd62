// The writer registry (names, extensions, help); the file sink's errors.
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

#include "report/report_writer.h"

namespace lockscope {
namespace {

TEST(ReportFormats, ExtensionsPickTheLongestMatch) {
  EXPECT_EQ(format_for_path("r.json"), "json");
  EXPECT_EQ(format_for_path("dir.v2/R.JSON"), "json");
  EXPECT_EQ(format_for_path("r.txt"), "text");
  EXPECT_EQ(format_for_path("report"), "text");
  EXPECT_EQ(format_for_path("r.json.bak"), "text");
}

TEST(ReportFormats, EveryFormatIsMadeAndListedInTheHelp) {
  const std::string help = report_formats_help();
  for (const ReportFormat& format : report_format_table()) {
    EXPECT_NE(format.make(), nullptr) << format.name;
    EXPECT_NE(help.find("  " + format.name + " "), std::string::npos) << help;
    EXPECT_NE(help.find(format.help), std::string::npos) << help;
    for (const std::string& extension : format.extensions)
      EXPECT_EQ(format_for_path("x" + extension), format.name);
  }
  EXPECT_EQ(report_formats().front(), "text");
}

TEST(ReportFormats, UnknownFormatNamesTheKnownOnes) {
  try {
    make_report_writer("nosuch");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(),
                 "unknown report format 'nosuch' (known: text, json)");
  }
}

TEST(ReportSink, UncreatableFileSaysWhy) {
  ReportSink sink(std::string("/dev/null/report.csv"));
  EXPECT_TRUE(sink.is_file());
  try {
    sink.stream();
    FAIL() << "no exception";
  } catch (const ReportSinkError& error) {
    EXPECT_STREQ(error.what(), "Not a directory");
  }
}

}  // namespace
}  // namespace lockscope
