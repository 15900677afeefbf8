// `heartwave run` end to end through the built CLI: a tiny sheet produces the expected
// files, a restart continues bit-identically, and a big case prints its memory estimate.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class RunCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "hw_run_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    std::ofstream(dir_ / "tiny.toml") << R"(name = "tiny"
[grid]
size = [20, 20]
spacing = 0.5
[conductivity]
diffusivity = 1.0
[[model]]
name = "aliev_panfilov_1996"
[[initial]]
region = { lo = [0, 0], hi = [2, 10] }
variable = "V"
value = 1.0
[time]
dt = 0.05
t_end = 4
[output]
directory = "a"
fields = ["V", "v"]
field_interval = 1
png_interval = 2
probes = [{ name = "mid", position = [5, 5] }]
activation_map = true
activation_threshold = 0.5
)";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // Runs the CLI in dir_ with args; returns the exit code, output in out_.
  int run(const std::string& args) {
    const std::string cmd = "cd '" + dir_.string() + "' && timeout 60 '" + HW_CLI_PATH + "' " + args +
                            " > out.txt 2>&1";
    int status = std::system(cmd.c_str());
    out_ = slurp(dir_ / "out.txt");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  fs::path dir_;
  std::string out_;
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
  EXPECT_EQ(probes.rfind("t,", 0), 0u) << probes;
  EXPECT_GE(std::count(probes.begin(), probes.end(), '\n'), 5);  // t = 0, 1, 2, 3, 4 ms
  EXPECT_NE(out_.find("memory"), std::string::npos) << out_;
  EXPECT_NE(out_.find("activation:"), std::string::npos) << out_;
}

TEST_F(RunCliTest, RestartContinuesBitIdentically) {
  // Arrange: an uninterrupted run to 8 ms, and a run to 4 ms then continued to 8 ms.
  ASSERT_EQ(run("run tiny.toml -q --threads 1 --set time.t_end=8 --set output.directory=\"full\""), 0) << out_;
  ASSERT_EQ(run("run tiny.toml -q --threads 1 --set output.directory=\"part\""), 0) << out_;

  // Act
  const int rc = run("run tiny.toml -q --threads 1 --set output.directory=\"part\" --set time.t_end=8 "
                     "--restart part/checkpoint.hwck");

  // Assert
  ASSERT_EQ(rc, 0) << out_;
  const std::string full = slurp(dir_ / "full" / "fields_000008.vti");
  const std::string cont = slurp(dir_ / "part" / "fields_000008.vti");
  ASSERT_FALSE(full.empty());
  EXPECT_TRUE(full == cont) << "the continued run's final field differs from the uninterrupted run's";
  EXPECT_EQ(slurp(dir_ / "full" / "fields_000006.vti"), slurp(dir_ / "part" / "fields_000006.vti"));
  // The series after the restart still lists the frames written before it.
  EXPECT_NE(slurp(dir_ / "part" / "fields.pvd").find("fields_000002.vti"), std::string::npos);
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
  ASSERT_EQ(run("run '" + karma.string() + "' --check"), 0) << out_;
  // 256³ cells, float: two copies of E and one of n = 12 B per cell ≈ 201 MB (seed 004: 192 MiB).
  EXPECT_NE(out_.find("256x256x256"), std::string::npos) << out_;
  const auto at = out_.find("memory");
  ASSERT_NE(at, std::string::npos) << out_;
  const auto open = out_.find('(', at);
  const double bytes = std::strtod(out_.c_str() + open + 1, nullptr);
  std::cout << "karma3d memory estimate: " << bytes << " bytes\n";
  EXPECT_GE(bytes, 256.0 * 256 * 256 * 12);
  EXPECT_LE(bytes, 210e6);
}

}  // namespace
