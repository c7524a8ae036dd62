// A report written to a file appears whole or not at all, and leaves no temporary file, whatever
// failed: the file, or the writer itself.
#include "report/report_file.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace lockscope {
namespace {

namespace fs = std::filesystem;

class HalfWayFailingWriter final : public ReportWriter {
 public:
  using ReportWriter::write;
  void write(const ProfileViews&, const ReportOptions&, ReportSink& sink) override {
    sink.stream() << "half a report";
    throw std::runtime_error("the writer's own failure");
  }
};

class CompleteWriter final : public ReportWriter {
 public:
  using ReportWriter::write;
  void write(const ProfileViews&, const ReportOptions&, ReportSink& sink) override {
    sink.stream() << "the whole report\n";
  }
};

class ReportFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lockscope-report-file-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ReportFile, AWriterThatThrowsLeavesNeitherTheReportNorItsTemporaryFile) {
  const std::string output = (dir_ / "x.json").string();
  HalfWayFailingWriter writer;
  try {
    write_report_file(writer, Profile{}, ReportOptions{}, output);
    FAIL() << "no error";
  } catch (const ReportFileError& error) {
    EXPECT_EQ(std::string(error.what()),
              "cannot write the report to '" + output + "': the writer's own failure");
    EXPECT_FALSE(error.file_problem());
  }
  EXPECT_FALSE(fs::exists(output));
  EXPECT_FALSE(fs::exists(output + ".tmp"));
}

TEST_F(ReportFile, AFileThatCannotBeCreatedIsAFileProblem) {
  const std::string output = (dir_ / "missing-dir" / "x.json").string();
  CompleteWriter writer;
  try {
    write_report_file(writer, Profile{}, ReportOptions{}, output);
    FAIL() << "no error";
  } catch (const ReportFileError& error) {
    EXPECT_TRUE(error.file_problem()) << error.what();
  }
}

TEST_F(ReportFile, ARenameThatFailsLeavesNoTemporaryFile) {
  const std::string output = (dir_ / "taken").string();
  fs::create_directory(output);
  fs::create_directory(output + "/not-empty");  // rename(2) over a non-empty directory fails
  CompleteWriter writer;
  EXPECT_THROW(write_report_file(writer, Profile{}, ReportOptions{}, output), ReportFileError);
  EXPECT_FALSE(fs::exists(output + ".tmp"));
}

TEST_F(ReportFile, ACompleteReportIsRenamedIntoPlace) {
  const std::string output = (dir_ / "x.txt").string();
  CompleteWriter writer;
  write_report_file(writer, Profile{}, ReportOptions{}, output);
  EXPECT_TRUE(fs::exists(output));
  EXPECT_FALSE(fs::exists(output + ".tmp"));
}

}  // namespace
}  // namespace lockscope
