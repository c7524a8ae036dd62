// What counts as a set of runs on disk, and in what order its runs come: directories made here
// (a profile file is only a name to the listing; reading is the integration tests').
#include "analysis/compare/run_set.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace lockscope::compare {
namespace {

namespace fs = std::filesystem;

class RunSet : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "lockscope-run-set-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  void make_runs(std::initializer_list<const char*> names) {
    for (const char* name : names) fs::create_directory(dir_ / name);
  }
  std::string path() const { return dir_.string(); }
  std::string run(const char* name) const { return (dir_ / name).string(); }
  // The message run_directories() throws for this directory ("" when it throws none).
  std::string error_of() const {
    try {
      run_directories(path());
    } catch (const std::runtime_error& error) {
      return error.what();
    }
    return "";
  }

  fs::path dir_;
};

TEST_F(RunSet, AProfileDirectoryIsASetOfItselfEvenWithNumberedSubdirectories) {
  std::ofstream(dir_ / "4242-1.lsprof") << "x";
  make_runs({"1", "2"});  // a user's own subdirectories beside the profile
  EXPECT_FALSE(is_run_set(path()));
  EXPECT_EQ(run_directories(path()), std::vector<std::string>{path()});
}

TEST_F(RunSet, RunsComeInNumericOrderAndOtherNamesAreNotRuns) {
  make_runs({"10", "2", "1", "9", "3", "4", "5", "6", "7", "8", "11"});
  make_runs({"01", "x", "1001", "0", "-1"});  // not run numbers: no leading zero, 1 … 1000
  std::ofstream(dir_ / "12") << "a file, not a run";
  EXPECT_TRUE(is_run_set(path()));
  std::vector<std::string> expected;
  for (int number = 1; number <= 11; ++number)
    expected.push_back(run(std::to_string(number).c_str()));
  EXPECT_EQ(run_directories(path()), expected);
}

TEST_F(RunSet, AMissingRunIsAnErrorNamingIt) {
  make_runs({"1", "3"});
  EXPECT_TRUE(is_run_set(path()));
  EXPECT_EQ(error_of(),
            "'" + path() + "' is a set of runs with run 2 missing (it has 1 to 3, 2 of them)");
}

TEST_F(RunSet, ASetMustStartAtOne) {
  make_runs({"2", "3"});
  EXPECT_EQ(error_of(),
            "'" + path() + "' is a set of runs with run 1 missing (it has 2 to 3, 2 of them)");
}

TEST_F(RunSet, ADirectoryWithNeitherIsAnError) {
  make_runs({"x"});
  EXPECT_FALSE(is_run_set(path()));
  EXPECT_NE(error_of().find("is neither a profile directory (no *.lsprof file) nor a set of runs"),
            std::string::npos)
      << error_of();
  EXPECT_FALSE(is_run_set(run("absent")));
  EXPECT_EQ(error_of().find('\n'), std::string::npos);
}

// A run whose program left nothing (killed before it wrote) is no sample: reading the set says
// which run.
TEST_F(RunSet, ReadingARunWithoutAProfileNamesTheRun) {
  make_runs({"1"});
  try {
    read_run_set(path());
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& error) {
    EXPECT_EQ(std::string(error.what()),
              "no readable profile in run 1 of 1 ('" + run("1") + "'): no *.lsprof file");
  }
}

}  // namespace
}  // namespace lockscope::compare
