// `heartwave run` never loses or mixes results (issue 32), end to end through the built CLI:
// a second run into a folder another run owns is refused, --overwrite clears only that
// run's files, a folder that is a file is an input error before any work, --restart alone
// continues the checkpoint's run with its overrides, and the command printed on Ctrl-C
// continues the stopped run as printed without touching another run's folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "cli_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using hw::cli_test::slurp;

// Every file of a folder with its bytes.
std::map<std::string, std::string> contents(const fs::path& dir) {
  std::map<std::string, std::string> m;
  for (const auto& e : fs::directory_iterator(dir)) m[e.path().filename().string()] = slurp(e.path());
  return m;
}

class RunFoldersTest : public hw::cli_test::CliFolderTest {
 protected:
  RunFoldersTest()
      : CliFolderTest("hw_runf_", 60, false, hw::cli_test::tiny_sheet(R"(directory = "a"
fields = ["V"]
field_interval = 1
probes = [{ name = "mid", position = [5, 5] }]
probe_interval = 0.25
)")) {}
};

TEST_F(RunFoldersTest, ASecondRunIntoAnotherRunsFolderIsRefusedAndOverwriteClearsOnlyThatRunsFiles) {
  // Arrange: a run to 4 ms in a/, and a file of the user's in the folder.
  ASSERT_EQ(run("run tiny.toml -q --threads 1"), 0) << out_;
  std::ofstream(dir_ / "a" / "notes.txt") << "my notes";
  const auto before = contents(dir_ / "a");

  // Act
  const int refused = run("run tiny.toml -q --threads 1 --set time.t_end=2");
  const std::string why = out_;
  const auto after_refusal = contents(dir_ / "a");
  const int overwritten = run("run tiny.toml -q --threads 1 --set time.t_end=2 --overwrite");

  // Assert: refused without a change, saying whose the folder is and what to do.
  EXPECT_EQ(refused, 1) << why;
  EXPECT_NE(why.find("output.directory: the folder a holds the outputs of another run"), std::string::npos) << why;
  EXPECT_NE(why.find("finished at t = 4 ms"), std::string::npos) << why;
  EXPECT_NE(why.find("--overwrite"), std::string::npos) << why;
  EXPECT_TRUE(after_refusal == before);
  // --overwrite: the 2 ms run alone (no stale frames of the 4 ms run), the user's file kept.
  ASSERT_EQ(overwritten, 0) << out_;
  EXPECT_TRUE(fs::exists(dir_ / "a" / "fields_000002.vti"));
  EXPECT_FALSE(fs::exists(dir_ / "a" / "fields_000003.vti"));
  EXPECT_FALSE(fs::exists(dir_ / "a" / "fields_000004.vti"));
  EXPECT_EQ(slurp(dir_ / "a" / "notes.txt"), "my notes");
  const std::string manifest = slurp(dir_ / "a" / "run.json");
  EXPECT_NE(manifest.find("\"state\":\"finished\""), std::string::npos) << manifest;
  EXPECT_NE(manifest.find("\"time.t_end=2\""), std::string::npos) << manifest;
  EXPECT_EQ(manifest.find("notes.txt"), std::string::npos) << manifest;
}

TEST_F(RunFoldersTest, AnOutputFolderThatIsAFileIsAnInputErrorBeforeAnyWork) {
  std::ofstream(dir_ / "a") << "a file";
  const int rc = run("run tiny.toml --threads 1");
  EXPECT_EQ(rc, 1) << out_;
  EXPECT_NE(out_.find("tiny.toml:16:1: error: output.directory: a is a file, not a folder"), std::string::npos)
      << out_;
  EXPECT_EQ(out_.find("engine"), std::string::npos) << out_;  // nothing was set up
  EXPECT_EQ(out_.find("internal error"), std::string::npos) << out_;
}

TEST_F(RunFoldersTest, RestartAloneContinuesTheCheckpointsRunWithItsOverrides) {
  // Arrange: the whole run with a changed diffusivity, and the same run stopped at 2 ms.
  const std::string physics = "--set conductivity.diffusivity=0.5 ";
  ASSERT_EQ(run("run tiny.toml -q --threads 1 " + physics + "--set output.directory='\"full\"'"), 0) << out_;
  ASSERT_EQ(run("run tiny.toml -q --threads 1 " + physics + "--set time.t_end=2 --set output.directory='\"part\"'"), 0)
      << out_;

  // Act: no case, no overrides but the longer end; then one with other physics.
  const int rc = run("run --threads 1 --restart part/checkpoint.hwck --set time.t_end=4");
  const std::string continued = out_;
  const int other = run("run tiny.toml --restart part/checkpoint.hwck --set conductivity.diffusivity=1.0");

  // Assert
  ASSERT_EQ(rc, 0) << continued;
  EXPECT_NE(continued.find("with --set conductivity.diffusivity=0.5"), std::string::npos) << continued;
  for (const char* f : {"probes.csv", "fields.pvd", "fields_000004.vti"})
    EXPECT_TRUE(slurp(dir_ / "full" / f) == slurp(dir_ / "part" / f)) << f;
  EXPECT_EQ(other, 1) << out_;
  EXPECT_NE(out_.find("conductivity.diffusivity = 0.5, this command conductivity.diffusivity = 1.0"),
            std::string::npos)
      << out_;
  EXPECT_EQ(out_.find("case hash"), std::string::npos) << out_;
}

TEST_F(RunFoldersTest, TheCommandPrintedOnCtrlCContinuesTheRunInItsOwnFolder) {
  // Arrange: the issue's case — a finished run in the case's folder a/, then a shorter run
  // with --set options into int/, stopped by SIGINT; and that shorter run uninterrupted.
  std::ofstream(dir_ / "beat.toml") << hw::cli_test::beat_sheet("directory = \"a\"\n");
  ASSERT_EQ(run("run beat.toml -q --threads 1"), 0) << out_;
  const auto first_run = contents(dir_ / "a");
  const std::string sets = "--set time.t_end=120 --set output.directory='\"int\"'";
  ASSERT_EQ(run("run beat.toml -q --threads 1 --set time.t_end=120 --set output.directory='\"ref\"'"), 0) << out_;
  const int stopped = hw::cli_test::run_then_sigint(dir_, "run beat.toml -q --threads 1 " + sets + " > int.txt 2>&1",
                                                     hw::cli_test::wait_for_file("int/fields_000002.vti"));
  const std::string msg = slurp(dir_ / "int.txt");
  if (stopped == 0) GTEST_SKIP() << "the run ended before SIGINT reached it (machine too fast): " << msg;
  ASSERT_EQ(stopped, 130) << msg;
  const auto at = msg.find("continue with: heartwave ");
  ASSERT_NE(at, std::string::npos) << msg;
  const std::string printed = msg.substr(at + 25, msg.find('\n', at) - at - 25);

  // Act: the printed command, as printed.
  const int rc = run(printed);

  // Assert: one consistent run in int/ (the uninterrupted run's outputs), a/ untouched.
  ASSERT_EQ(rc, 0) << "heartwave " << printed << "\n" << out_;
  for (const char* f : {"probes.csv", "ecg.csv", "maps.vti", "maps_summary.csv", "fields.pvd", "fields_000006.vti"})
    EXPECT_TRUE(slurp(dir_ / "ref" / f) == slurp(dir_ / "int" / f)) << f;
  EXPECT_FALSE(fs::exists(dir_ / "int" / "fields_000007.vti"));
  EXPECT_TRUE(contents(dir_ / "a") == first_run) << "the printed command touched the first run's folder";
  const std::string manifest = slurp(dir_ / "int" / "run.json");
  EXPECT_NE(manifest.find("\"state\":\"finished\",\"t_ms\":120"), std::string::npos) << manifest;
  std::cout << "[measured] printed command: heartwave " << printed << "\n";
}

}  // namespace
