// `heartwave run` end to end through the built CLI: a tiny sheet produces the expected
// files, a restart continues bit-identically (state, maps, probes, ECG), a movie is made
// when ffmpeg is present, and a big case prints its memory estimate.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using hw::cli_test::slurp;

class RunCliTest : public hw::cli_test::CliFolderTest {
 protected:
  RunCliTest()
      : CliFolderTest("hw_run_", 60, false, hw::cli_test::tiny_sheet(R"(directory = "a"
fields = ["V", "v"]
field_interval = 1
png_interval = 2
probes = [{ name = "mid", position = [5, 5] }]
activation_map = true
activation_threshold = 0.5
apd_map = true
conduction_velocity = true
probe_interval = 0.25
electrodes = [{ name = "e1", position = [15, 5] }]
)")) {}
};

TEST_F(RunCliTest, TinySheetWritesTheRequestedOutputs) {
  // Act
  const int rc = run("run tiny.toml --threads 1");

  // Assert
  ASSERT_EQ(rc, 0) << out_;
  const fs::path a = dir_ / "a";
  for (const char* f : {"fields.pvd", "fields_000000.vti", "fields_000004.vti", "V_00000.png", "V_00002.png",
                        "probes.csv", "checkpoint.hwck", "maps.vti", "maps_summary.csv"})
    EXPECT_TRUE(fs::exists(a / f)) << f << "\n" << out_;
  EXPECT_FALSE(fs::exists(a / "fields_000005.vti"));
  const std::string pvd = slurp(a / "fields.pvd");
  EXPECT_NE(pvd.find("fields_000004.vti"), std::string::npos) << pvd;
  const std::string probes = slurp(a / "probes.csv");
  EXPECT_EQ(probes.rfind("t_ms,", 0), 0u) << probes;
  EXPECT_GE(std::count(probes.begin(), probes.end(), '\n'), 5);  // t = 0, 1, 2, 3, 4 ms
  EXPECT_NE(out_.find("memory"), std::string::npos) << out_;
  EXPECT_NE(out_.find("activation:"), std::string::npos) << out_;
}

TEST_F(RunCliTest, RestartContinuesBitIdentically) {
  // Arrange: an uninterrupted run to 8 ms, and a run to 4 ms then continued to 8 ms.
  ASSERT_EQ(run("run tiny.toml -q --threads 1 --set time.t_end=8 --set output.directory=\"full\""), 0) << out_;
  ASSERT_EQ(run("run tiny.toml -q --threads 1 --set output.directory=\"part\""), 0) << out_;

  // Act
  const int rc = run("run tiny.toml --threads 1 --set output.directory=\"part\" --set time.t_end=8 "
                     "--restart part/checkpoint.hwck");

  // Assert: the state, and every output accumulated over the run, as if never interrupted.
  ASSERT_EQ(rc, 0) << out_;
  EXPECT_NE(out_.find("outputs continue"), std::string::npos) << out_;
  for (const char* f : {"fields_000006.vti", "fields_000008.vti", "fields.pvd", "probes.csv", "ecg.csv",
                        "maps.vti", "maps_summary.csv", "V_00004.png", "activation.png"}) {
    const std::string full = slurp(dir_ / "full" / f);
    ASSERT_FALSE(full.empty()) << f;
    EXPECT_TRUE(full == slurp(dir_ / "part" / f)) << f << ": the continued run differs from the uninterrupted one";
  }
  // The maps cover the whole run: the cells activated before the restart are in them.
  const std::string summary = slurp(dir_ / "part" / "maps_summary.csv");
  const auto at = summary.find("activation_min,");
  ASSERT_NE(at, std::string::npos) << summary;
  EXPECT_LT(std::strtod(summary.c_str() + at + 15, nullptr), 4.0) << summary;
  std::cout << "[measured] heartwave run restart at 4 of 8 ms: 9 output files byte-identical\n";
}

TEST_F(RunCliTest, RestartFromAPeriodicCheckpointAfterACrashRewritesTheTracesFromIt) {
  // Arrange: the uninterrupted run; then a run whose last periodic checkpoint is at 3 ms
  // but which went on to 5 ms before "crashing" (its files hold rows after 3 ms).
  ASSERT_EQ(run("run tiny.toml -q --threads 1 --set time.t_end=6 --set output.directory=\"full\""), 0) << out_;
  ASSERT_EQ(run("run tiny.toml -q --threads 1 --set time.t_end=3 --set output.directory=\"part\""), 0) << out_;
  fs::copy_file(dir_ / "part" / "checkpoint.hwck", dir_ / "at3.hwck");
  ASSERT_EQ(run("run tiny.toml -q --threads 1 --set time.t_end=5 --set output.directory=\"part\" "
                "--restart at3.hwck"), 0) << out_;

  // Act
  ASSERT_EQ(run("run tiny.toml -q --threads 1 --set time.t_end=6 --set output.directory=\"part\" "
                "--restart at3.hwck"), 0) << out_;

  // Assert
  for (const char* f : {"probes.csv", "ecg.csv", "maps.vti", "fields.pvd"})
    EXPECT_TRUE(slurp(dir_ / "full" / f) == slurp(dir_ / "part" / f)) << f;
}

TEST_F(RunCliTest, SigintMidRunThenRestartGivesTheUninterruptedMapsAndTraces) {
  // Arrange: a sheet long enough for whole beats (APD90 finite), run once without a stop.
  std::ofstream(dir_ / "beat.toml") << hw::cli_test::beat_sheet();
  ASSERT_EQ(run("run beat.toml -q --threads 1 --set output.directory=\"full\""), 0) << out_;

  // Act: SIGINT once the t = 60 ms field exists (mid-run, between output times), restart.
  const int stopped = hw::cli_test::run_then_sigint(
      dir_, "run beat.toml -q --threads 1 --set 'output.directory=\"part\"' > int.txt 2>&1",
      hw::cli_test::wait_for_file("part/fields_000003.vti"));
  const std::string msg = slurp(dir_ / "int.txt");
  if (stopped == 0) GTEST_SKIP() << "the run ended before SIGINT reached it (machine too fast): " << msg;
  ASSERT_EQ(stopped, 130) << msg;
  ASSERT_EQ(run("run beat.toml -q --threads 1 --set output.directory=\"part\" --restart part/checkpoint.hwck"), 0)
      << out_;

  // Assert
  for (const char* f : {"probes.csv", "ecg.csv", "maps.vti", "maps_summary.csv", "fields.pvd"})
    EXPECT_TRUE(slurp(dir_ / "full" / f) == slurp(dir_ / "part" / f)) << f;
  const std::string summary = slurp(dir_ / "part" / "maps_summary.csv");
  // Every activated cell (all but the 120 that start excited) repolarised: finite APD90.
  EXPECT_NE(summary.find("apd90_cells,1440,cells"), std::string::npos) << summary;
  const auto at = msg.find("stopped by signal 2 at t = ");
  std::cout << "[measured] SIGINT at t = " << (at == std::string::npos ? -1 : std::strtod(msg.c_str() + at + 27, nullptr))
            << " ms of 150 ms, restart: probes, ECG, activation and APD90 maps byte-identical\n";
}

TEST_F(RunCliTest, MovieOfATinySheetWhenFfmpegIsPresent) {
  if (std::system("command -v ffmpeg > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "ffmpeg is not on the PATH (tools/setup.sh installs it): no movie to test";
  // Act: 9 frames (png_interval 0.5 ms over 4 ms).
  ASSERT_EQ(run("run tiny.toml --threads 1 --set output.png_interval=0.5 --set output.movie=true"), 0) << out_;

  // Assert: an MP4 (ISO base media: a 'ftyp' box first) of a plausible size.
  const std::string mp4 = slurp(dir_ / "a" / "V.mp4");
  ASSERT_GE(mp4.size(), 12u) << out_;
  EXPECT_EQ(mp4.substr(4, 4), "ftyp");
  EXPECT_GT(mp4.size(), 2000u);
  EXPECT_NE(out_.find("movie: wrote"), std::string::npos) << out_;
  if (std::system("command -v ffprobe > /dev/null 2>&1") == 0) {
    ASSERT_EQ(std::system(("ffprobe -v error -count_frames -select_streams v:0 -show_entries "
                           "stream=codec_type,nb_read_frames -of csv=p=0 '" + (dir_ / "a" / "V.mp4").string() +
                           "' > '" + (dir_ / "probe.txt").string() + "' 2>&1").c_str()),
              0);
    const std::string probe = slurp(dir_ / "probe.txt");
    EXPECT_EQ(probe.rfind("video,9", 0), 0u) << probe;
  }
  std::cout << "[measured] movie of a 20x20 sheet, 9 frames: " << mp4.size() << " bytes\n";
}

TEST_F(RunCliTest, RestartOfAnotherCaseIsRefused) {
  ASSERT_EQ(run("run tiny.toml -q --threads 1"), 0) << out_;
  EXPECT_EQ(run("run tiny.toml -q --set conductivity.diffusivity=0.5 --restart a/checkpoint.hwck"), 1);
  EXPECT_NE(out_.find("checkpoint.hwck"), std::string::npos) << out_;
}

TEST_F(RunCliTest, NanStopsWithTimeCellVariableAfterSavingTheLastGoodState) {
  // Arrange: a stimulus so strong that the state overflows at its first step (t = 0.5 ms).
  std::ofstream(dir_ / "nan.toml") << "[grid]\nsize = [10, 10]\nspacing = 0.5\n[[model]]\n"
                                      "name = \"aliev_panfilov_1996\"\n[[stimulus]]\n"
                                      "region = { lo = [0, 0], hi = [1, 1] }\namplitude = 1e38\nstart = 0.5\n"
                                      "[time]\ndt = 0.05\nt_end = 2\n[output]\ndirectory = \"n\"\n";
  // Act
  const int rc = run("run nan.toml -q --threads 1");
  // Assert
  EXPECT_EQ(rc, 1) << out_;
  EXPECT_NE(out_.find("blew up at t = 0.55 ms in cell (0, 0, 0)"), std::string::npos) << out_;
  EXPECT_NE(out_.find("last good state (t = 0.5 ms)"), std::string::npos) << out_;
  EXPECT_TRUE(fs::exists(dir_ / "n" / "last_good.vti"));
  EXPECT_TRUE(fs::exists(dir_ / "n" / "checkpoint.hwck"));
}

TEST_F(RunCliTest, Karma3dPrintsItsMemoryEstimateWithoutRunning) {
  const fs::path karma = fs::path(HW_TEST_DATA_DIR).parent_path() / "examples" / "karma3d.toml";
  // The bytes in brackets after `key` in the plan's lines.
  const auto bytes_after = [&](const std::string& key) {
    const auto at = out_.find(key);
    EXPECT_NE(at, std::string::npos) << key << " in:\n" << out_;
    return at == std::string::npos ? 0.0 : std::strtod(out_.c_str() + out_.find('(', at) + 1, nullptr);
  };
  const auto check = [&](const std::string& extra) {
    EXPECT_EQ(run("run '" + karma.string() + "' --check --backend cpu" + extra), 0) << out_;
    EXPECT_NE(out_.find("256x256x256"), std::string::npos) << out_;
  };
  const double cells = 256.0 * 256 * 256;
  check(" --set output.field_interval=0 --set output.png_interval=0");
  // Running, float: two copies of E and one of n = 12 B per cell ≈ 201 MB (seed 004: 192
  // MiB). At the peaks, the state in double (16 B per cell) three times besides.
  const auto run_at = out_.find(" bytes) while running");
  ASSERT_NE(run_at, std::string::npos) << out_;
  const double running = std::strtod(out_.c_str() + out_.rfind('(', run_at) + 1, nullptr), need = bytes_after("memory");
  std::cout << "karma3d memory estimate without outputs: " << running << " bytes running, " << need << " at the peak\n";
  EXPECT_GE(running, cells * 12);
  EXPECT_LE(running, 210e6);
  EXPECT_DOUBLE_EQ(need - running, cells * 48);
  // With its outputs (V in fields and pictures): up to four copies of V in flight (268 MB),
  // fewer than a checkpoint's transient (805 MB): the peak stays.
  check("");
  EXPECT_NE(out_.find("field outputs in flight"), std::string::npos) << out_;
  EXPECT_DOUBLE_EQ(bytes_after("memory"), need);
}

}  // namespace
