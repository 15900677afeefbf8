// The heartwave binary end to end: exit codes, JSON output, convert and sweep.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_test_support.hpp"
#include "device/device.hpp"

namespace {

using Run = hw::cli_test::CliRun;
using hw::cli_test::Capture;

// Runs the CLI with arguments (shell syntax), capturing stdout; stderr is discarded.
Run cli(const std::string& args) { return hw::cli_test::cli(args, Capture::out); }

// Runs the CLI capturing stderr only (stdout discarded).
Run cli_stderr(const std::string& args) { return hw::cli_test::cli(args, Capture::err); }

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto i = s.find(what); i != std::string::npos; i = s.find(what, i + 1)) ++n;
  return n;
}

// The number after "key": in a JSON text (minimal parsing: flat numbers only).
double json_number(const std::string& s, const std::string& key, std::size_t from = 0) {
  const auto i = s.find("\"" + key + "\":", from);
  if (i == std::string::npos) return -1e300;
  return std::stod(s.substr(i + key.size() + 3));
}

std::string temp_path(const std::string& name) { return hw::cli_test::temp_file("hw_test_cli_", name); }

std::string shared_model(const std::string& name) {
  return std::string(HW_SHARED_DIR) + "/models/cellml/" + name;
}

}  // namespace

TEST(Cli, NoArgumentsPrintsHelp) {
  const auto r = cli("");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("Examples"), std::string::npos);
}

TEST(Cli, CellJsonHasBeatsWithApds) {
  const auto r = cli("cell mfhn --beats 2 --json --kernel interpreter");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.front(), '{');
  EXPECT_NE(r.out.find("\"beats\":["), std::string::npos);
  EXPECT_EQ(count(r.out, "\"apd90\":"), 2u);
  const double apd90 = json_number(r.out, "apd90");
  EXPECT_GT(apd90, 100.0);
  EXPECT_LT(apd90, 500.0);
  EXPECT_GT(json_number(r.out, "apd90"), json_number(r.out, "apd50"));
}

TEST(Cli, CellWritesTraceWithHeader) {
  const std::string trace = temp_path("trace.csv");
  const auto r = cli("cell mfhn --beats 1 --kernel interpreter --output-interval 0.5 -o " + trace);
  ASSERT_EQ(r.code, 0);
  std::ifstream f(trace);
  std::string header;
  std::getline(f, header);
  EXPECT_EQ(header.rfind("t,V,", 0), 0u) << header;
  std::size_t rows = 0;
  for (std::string line; std::getline(f, line);) ++rows;
  EXPECT_EQ(rows, 2001u);  // 0..1000 ms every 0.5 ms
}

TEST(Cli, InspectAndConvertACellmlModel) {
  const std::string file = shared_model("luo_rudy_1991.cellml");
  if (!std::ifstream(file)) GTEST_SKIP() << "no shared models";
  const auto inspect = cli("model inspect " + file);
  ASSERT_EQ(inspect.code, 0);
  EXPECT_NE(inspect.out.find("states (8)"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("gate"), std::string::npos);
  const auto json = cli("model inspect --json " + file);
  ASSERT_EQ(json.code, 0);
  EXPECT_EQ(count(json.out, "\"initial\":"), 8u);

  const std::string hwm = temp_path("lr91.hwm");
  ASSERT_EQ(cli("model convert " + file + " -o " + hwm).code, 0);
  std::ifstream f(hwm);
  std::string first;
  std::getline(f, first);
  EXPECT_NE(first.find("luo_rudy_1991.cellml"), std::string::npos);
  // The converted model paces like its source.
  const auto a = cli("cell " + file + " --beats 1 --json --kernel interpreter");
  const auto b = cli("cell " + hwm + " --beats 1 --json --kernel interpreter");
  ASSERT_EQ(a.code, 0);
  ASSERT_EQ(b.code, 0);
  EXPECT_NEAR(json_number(a.out, "apd90"), json_number(b.out, "apd90"), 1e-6);
}

TEST(Cli, SweepGridWritesOneRowPerCell) {
  const std::string out = temp_path("sweep.csv");
  const auto r = cli("sweep mfhn --beats 1 --kernel interpreter --grid b=0.8:1.2:3 --threads 2 -o " + out);
  ASSERT_EQ(r.code, 0);
  std::ifstream f(out);
  std::string header;
  std::getline(f, header);
  EXPECT_EQ(header.rfind("cell,b,apd90", 0), 0u) << header;
  std::size_t rows = 0;
  for (std::string line; std::getline(f, line);) ++rows;
  EXPECT_EQ(rows, 3u);
}

// --backend: one line says what runs; without a GPU, cuda is a one-line error and auto is
// the cpu. (tests/gpu/test_cuda_population.cpp compares the numbers where there is one.)
TEST(Cli, SweepBackendChoiceIsOneLine) {
  const std::string sweep = "sweep mfhn --beats 1 --grid b=0.8:1.2:2 --threads 2 ";
  auto r = cli_stderr(sweep + "--backend cpu");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("sweep: backend cpu\n"), std::string::npos) << r.out;
  r = cli_stderr(sweep + "--kernel interpreter");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("sweep: backend auto: cpu, as --kernel interpreter names a cpu kernel\n"),
            std::string::npos) << r.out;
  EXPECT_EQ(cli(sweep + "--backend gpu").code, 2);
  EXPECT_EQ(cli(sweep + "--kernel interpreter --backend cuda").code, 2);
  const auto& g = hw::gpu::gpu_status();
  r = cli_stderr(sweep);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(count(r.out, "sweep: backend"), 1u) << r.out;
  if (g.usable) {
    EXPECT_NE(r.out.find("sweep: backend auto: cuda on " + g.device.name), std::string::npos) << r.out;
  } else {
    EXPECT_NE(r.out.find("sweep: backend auto: cpu (" + g.why + ")\n"), std::string::npos) << r.out;
    r = cli_stderr(sweep + "--backend cuda");
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.out, "heartwave: error: --backend cuda: " + g.why + "\n");
    EXPECT_EQ(cli(sweep + "--backend auto").out, cli(sweep + "--backend cpu").out);
  }
}

TEST(Cli, BadCommandLinesHaveExitCodes) {
  EXPECT_EQ(cli("bogus").code, 2);
  EXPECT_EQ(cli("model").code, 2);
  EXPECT_EQ(cli("cell mfhn --dt -1").code, 2);
  EXPECT_EQ(cli("cell mfhn --integrator nope").code, 2);
  EXPECT_EQ(cli("cell mfhn --beats 0").code, 2);
  EXPECT_EQ(cli("sweep mfhn").code, 2);
  EXPECT_EQ(cli("sweep mfhn --lhs b=0.5:2").code, 2);
  EXPECT_EQ(cli("cell no_such_model").code, 1);
  EXPECT_EQ(cli("cell mfhn -p no_such_param=1").code, 1);
  EXPECT_EQ(cli("cell mfhn -p b=abc").code, 2);  // a malformed value: usage (docs/cli.md)
  EXPECT_EQ(cli("cell mfhn -p b").code, 2);
  EXPECT_EQ(cli("cell mfhn --stim-duration 5000").code, 1);
  EXPECT_EQ(cli("sweep mfhn --grid b=1:2").code, 2);  // malformed: usage
  EXPECT_EQ(cli("sweep mfhn --lhs b=x:2 --cells 4").code, 2);
  EXPECT_EQ(cli("model convert /nonexistent.cellml -o /tmp/x.hwm").code, 1);
}

// An output path that cannot be written is refused before the run (exit 1, an input error
// naming the option and the path), not after it: a folder, or a file in a folder that does
// not exist.
TEST(Cli, OutputPathsCheckedBeforeTheRun) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  for (const std::string cmd : {"cell mfhn --beats 1 -o ", "sweep mfhn --grid b=1:2:2 -o ",
                                "restitution mfhn --n-s1 1 --s2 400:400:1 -o "}) {
    const auto folder = cli_stderr(cmd + dir);
    EXPECT_EQ(folder.code, 1) << cmd;
    EXPECT_NE(folder.out.find("is a folder"), std::string::npos) << cmd << folder.out;
    const auto missing = cli_stderr(cmd + dir + "/hw_no_such_folder/x.csv");
    EXPECT_EQ(missing.code, 1) << cmd;
    EXPECT_NE(missing.out.find("does not exist"), std::string::npos) << cmd << missing.out;
  }
  // The dynamic protocol's CSV, written where asked.
  const std::string path = temp_path("dynamic.csv");
  std::filesystem::remove(path);
  ASSERT_EQ(cli("restitution mfhn --dynamic 500:1000:500 --beats 3 -o " + path).code, 0);
  std::ifstream in(path);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header, "bcl_ms,di_ms,apd90,captured");
  std::filesystem::remove(path);
}
