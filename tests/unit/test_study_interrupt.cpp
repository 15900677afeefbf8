// Ctrl-C on `cell`, `sweep` and `restitution` (issue 32): the beats, cells or rows that
// were finished are written atomically, stderr says how many of how many, the exit code is
// 130, and a sweep or an S1-S2 restitution resumed from its file (--resume) ends with the
// file an uninterrupted run writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_test_support.hpp"

namespace {

using hw::cli_test::slurp;

long lines(const std::string& s) { return long(std::count(s.begin(), s.end(), '\n')); }

class StudyInterruptTest : public hw::cli_test::CliFolderTest {
 protected:
  StudyInterruptTest() : CliFolderTest("hw_stop_", 120, true) {}
  // Runs the CLI in the background, sends SIGINT after `seconds`, returns the exit code.
  int interrupted(const std::string& args, double seconds) {
    const int rc = hw::cli_test::run_then_sigint(dir_, args + " > out.txt 2> err.txt", hw::cli_test::wait_seconds(seconds));
    out_ = slurp(dir_ / "out.txt");
    err_ = slurp(dir_ / "err.txt");
    return rc;
  }
};

TEST_F(StudyInterruptTest, SweepKeepsTheFinishedCellsAndResumeCompletesTheFile) {
  // Arrange: a sweep of several seconds, stopped after one.
  const std::string sweep =
      "sweep aliev_panfilov_1996 --lhs k=0.5:1.5 --cells 1200 --beats 2 --threads 1 --backend cpu ";
  const int rc = interrupted(sweep + "-o bio.csv", 0.7);
  if (rc == 0) GTEST_SKIP() << "the sweep ended before SIGINT reached it (machine too fast)";
  ASSERT_EQ(rc, 130) << err_;
  const std::string part = slurp(dir_ / "bio.csv");
  const auto at = err_.find("heartwave sweep: stopped by signal 2 after ");
  ASSERT_NE(at, std::string::npos) << err_;
  const long done = std::strtol(err_.c_str() + at + 43, nullptr, 10);
  EXPECT_NE(err_.find(" of 1200 cells; their rows are in bio.csv"), std::string::npos) << err_;
  EXPECT_NE(err_.find("--resume bio.csv"), std::string::npos) << err_;
  EXPECT_EQ(lines(part), done + 1) << "header and one row per finished cell";
  EXPECT_GT(done, 0);
  EXPECT_LT(done, 1200);

  // Act
  ASSERT_EQ(run(sweep + "--resume bio.csv"), 0) << err_;
  const std::string resumed = slurp(dir_ / "bio.csv");
  ASSERT_EQ(run(sweep + "-o full.csv"), 0) << err_;

  // Assert
  EXPECT_NE(err_.find("sweep: biomarkers in full.csv"), std::string::npos) << err_;
  EXPECT_EQ(lines(resumed), 1201);
  EXPECT_TRUE(resumed == slurp(dir_ / "full.csv")) << "the resumed sweep differs from the uninterrupted one";
  std::cout << "[measured] sweep stopped after " << done << " of 1200 cells; resumed: the uninterrupted file\n";
}

TEST_F(StudyInterruptTest, SweepResumeRefusesAnotherSweepsFile) {
  std::ofstream(dir_ / "other.csv") << "cell,k,apd90,apd50,apd30,dvdt_max,v_peak,v_rest,cat_amplitude,catd90\n"
                                       "0,99,1,1,1,1,1,1,nan,nan\n";
  EXPECT_EQ(run("sweep aliev_panfilov_1996 --grid k=0.5:1.5:3 --beats 1 --resume other.csv"), 1) << err_;
  EXPECT_NE(err_.find("other.csv:2:1: error: --resume: cell 0's parameters differ"), std::string::npos) << err_;
}

TEST_F(StudyInterruptTest, RestitutionKeepsTheFinishedRowsAndResumeCompletesTheFile) {
  const std::string s1s2 = "restitution aliev_panfilov_1996 --n-s1 2 --s2 60:1000:4 ";
  const int rc = interrupted(s1s2 + "-o rest.csv", 1.0);
  if (rc == 0) GTEST_SKIP() << "the protocol ended before SIGINT reached it (machine too fast)";
  ASSERT_EQ(rc, 130) << err_;
  const auto at = err_.find("heartwave restitution: stopped by signal 2 after ");
  ASSERT_NE(at, std::string::npos) << err_;
  const long done = std::strtol(err_.c_str() + at + 49, nullptr, 10);
  EXPECT_NE(err_.find(" of 236 coupling intervals; their rows are in rest.csv"), std::string::npos) << err_;
  EXPECT_EQ(lines(slurp(dir_ / "rest.csv")), done + 1);

  ASSERT_EQ(run(s1s2 + "--resume rest.csv"), 0) << err_;
  const std::string resumed = slurp(dir_ / "rest.csv");
  ASSERT_EQ(run(s1s2 + "-o full.csv"), 0) << err_;
  EXPECT_EQ(lines(resumed), 237);
  EXPECT_TRUE(resumed == slurp(dir_ / "full.csv")) << "the resumed protocol differs from the uninterrupted one";
  // The dynamic protocol cannot skip rows: refused as a usage error.
  EXPECT_EQ(run("restitution aliev_panfilov_1996 --dynamic 300:1000:100 --resume rest.csv"), 2) << err_;
  std::cout << "[measured] S1-S2 stopped after " << done << " of 236 intervals; resumed: the uninterrupted file\n";
}

TEST_F(StudyInterruptTest, CellKeepsTheFinishedBeatsAndTheTraceSoFar) {
  const int rc = interrupted("cell aliev_panfilov_1996 --beats 2000 -o trace.csv", 1.0);
  if (rc == 0) GTEST_SKIP() << "the run ended before SIGINT reached it (machine too fast)";
  ASSERT_EQ(rc, 130) << err_;
  const auto at = err_.find("heartwave cell: stopped by signal 2 after ");
  ASSERT_NE(at, std::string::npos) << err_;
  const long beats = std::strtol(err_.c_str() + at + 42, nullptr, 10);
  EXPECT_NE(err_.find(" of 2000 beats"), std::string::npos) << err_;
  const std::string trace = slurp(dir_ / "trace.csv");
  EXPECT_EQ(trace.rfind("t,V", 0), 0u) << trace.substr(0, 80);
  // One row per ms from t = 0 up to the stop, which lies after the last finished beat.
  EXPECT_GE(lines(trace) - 1, beats * 1000);
  // The table has the finished beats only: rows that start with the beat's number.
  std::istringstream table(out_);
  long rows = 0;
  for (std::string line; std::getline(table, line);) {
    std::istringstream words(line);
    long beat = 0;
    if (words >> beat && line.find_first_not_of(" 0123456789") > line.find_first_not_of(' ')) rows += beat == rows + 1;
  }
  EXPECT_EQ(rows, beats) << out_;
}

}  // namespace
