// Issue 32's first week: did-you-mean (core/suggest), image summaries (geometry inspect),
// run --check (run/case_check) and the command line around them (--version, own examples).
#include <gtest/gtest.h>

#include <string>

#include "cli_test_support.hpp"
#include "core/suggest.hpp"
#include "formats/image_summary.hpp"
#include "run/case_check.hpp"
#include "run/case_file.hpp"

namespace {

using hw::cli_test::CliRun;
using hw::cli_test::has;

// stdout and stderr together.
CliRun cli(const std::string& args) { return hw::cli_test::cli(args, hw::cli_test::Capture::both); }

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

}  // namespace

TEST(Suggest, CaseOnlyDifferenceComesFirst) {
  const std::vector<std::string> names{"g_K1", "g_Kr", "g_Ks", "g_Na"};
  const auto near = hw::nearest_names("g_ks", names, 3);
  ASSERT_FALSE(near.empty());
  EXPECT_EQ(near[0], "g_Ks");
  EXPECT_EQ(hw::did_you_mean("g_ks", names), " (did you mean 'g_Ks'?)");
}

TEST(Suggest, SwapsAndTyposWithinReachNothingFarAway) {
  EXPECT_EQ(hw::edit_distance("vlot", "volt"), 1u);  // a swap of neighbours is one edit
  EXPECT_EQ(hw::edit_distance("ABC", "abc", true), 0u);
  EXPECT_EQ(hw::did_you_mean("celll", {"cell", "sweep", "run"}), " (did you mean 'cell'?)");
  EXPECT_EQ(hw::did_you_mean("--sett", {"--set", "--backend"}), " (did you mean '--set'?)");
  EXPECT_EQ(hw::did_you_mean("frobnicate", {"cell", "sweep", "run"}), "");
  EXPECT_EQ(hw::did_you_mean("x", {"x"}), "");  // the name itself is no suggestion
  EXPECT_EQ(hw::did_you_mean("Ca_I", {"Ca_i", "Na_i", "K_i"}, 2), " (did you mean 'Ca_i' or 'Na_i'?)");
}

TEST(ImageSummary, LabelCountsAndExtentsInBothFrames) {
  hw::io::ImageVolume img;
  img.sizes = {4, 3, 2};
  img.spacing = {0.5, 1, 2};
  img.origin = {-1, 10, 0};
  std::vector<double> v(24, 0);
  v[1 + 4 * (2 + 3 * 1)] = 3;  // voxel (1, 2, 1)
  v[3 + 4 * (0 + 3 * 0)] = 3;  // voxel (3, 0, 0)
  v[0] = 1;
  img.set_values(hw::io::ScalarType::u8, v);
  const auto s = hw::io::summarize_image(img);
  ASSERT_TRUE(s.label_map);
  ASSERT_EQ(s.labels.size(), 3u);
  EXPECT_EQ(s.labels[0].value, 0);
  EXPECT_EQ(s.labels[0].count, 21u);
  EXPECT_EQ(s.labels[2].value, 3);
  EXPECT_EQ(s.labels[2].count, 2u);
  EXPECT_EQ(s.labels[2].lo, (std::array<int, 3>{1, 0, 0}));
  EXPECT_EQ(s.labels[2].hi, (std::array<int, 3>{3, 2, 1}));
  EXPECT_EQ(s.nonzero, 3u);
  const std::string text = joined(hw::io::describe_image(s));
  // Case frame: cell faces from the grid corner; image frame: origin + i·spacing.
  EXPECT_TRUE(has(text, "case  x 0.5…2, y 0…3, z 0…4 mm")) << text;
  EXPECT_TRUE(has(text, "image x -0.5…0.5, y 10…12, z 0…2 mm")) << text;
}

TEST(CaseCheck, EveryMisspeltNameListedWithSuggestions) {
  const auto c = hw::io::parse_case(R"(
[grid]
size = [10, 10]
spacing = 0.25
[time]
dt = 0.05
t_end = 1
[[model]]
name = "tentusscher_2006_epi"
params = { g_ks = 0.1 }
[[initial]]
variable = "cai"
value = 1e-4
[output]
fields = ["V", "Ca_I"]
)", "typos.toml");
  const auto r = hw::run::check_case(c, {.backend = "cpu", .calibrate_seconds = 0});
  ASSERT_EQ(r.problems.size(), 3u);
  EXPECT_TRUE(has(r.problems[0].message, "did you mean 'g_Ks'")) << r.problems[0].message;
  EXPECT_TRUE(has(r.problems[1].message, "did you mean 'Ca_i'")) << r.problems[1].message;
  EXPECT_TRUE(has(r.problems[2].message, "output.fields")) << r.problems[2].message;
}

TEST(CaseCheck, ValidCaseReportsGeometryMarginAndAMeasuredWallTime) {
  const auto c = hw::io::parse_case(R"(
[grid]
size = [20, 10]
spacing = 0.5
[[model]]
name = "aliev_panfilov_1996"
[[model]]
name = "aliev_panfilov_1996"
region = { kind = "box", lo = [0, 0], hi = [5, 5] }
[[stimulus]]
region = { kind = "face", face = "x-" }
amplitude = 50
[time]
dt = 0.05
t_end = 10
)", "valid.toml");
  const auto r = hw::run::check_case(c, {.backend = "cpu", .calibrate_seconds = 0.05});
  ASSERT_TRUE(r.ok()) << r.problems.front().str();
  const std::string text = joined(r.lines);
  EXPECT_TRUE(has(text, "200 tissue cells")) << text;
  EXPECT_TRUE(has(text, "tissue box x 0…10 y 0…5 z 0…0.5 mm")) << text;
  EXPECT_TRUE(has(text, "margin ×")) << text;
  EXPECT_TRUE(has(text, "wall time ≈")) << text;
  EXPECT_TRUE(has(text, "cells × 200 steps")) << text;  // t_end / dt steps, all 200 cells
}

TEST(CaseCheck, LabelledGeometryListsLabels) {
  const auto c = hw::io::parse_case(R"(
[grid]
size = [24, 24, 22]
spacing = 0.5
[geometry]
kind = "ellipsoid-shell"
centre = [6, 6, 5.5]
radii_outer = [5, 5, 5]
radii_inner = [3, 3, 3]
[[model]]
name = "aliev_panfilov_1996"
[time]
dt = 0.05
t_end = 1
)", "shell.toml");
  const auto r = hw::run::check_case(c, {.backend = "cpu", .calibrate_seconds = 0});
  ASSERT_TRUE(r.ok()) << r.problems.front().str();
  const std::string text = joined(r.lines);
  EXPECT_TRUE(has(text, "label      cells")) << text;
  EXPECT_FALSE(has(text, "wall time")) << text;  // calibrate_seconds = 0: none
}

TEST(CliFirstWeek, VersionAndHeader) {
  const auto v = cli("--version");
  EXPECT_EQ(v.code, 0);
  EXPECT_TRUE(has(v.out, "heartwave 0.")) << v.out;
  EXPECT_TRUE(has(cli("--help").out, "Heartwave 0.")) << "the help's header names the version";
}

TEST(CliFirstWeek, CommandsShowTheirOwnExamples) {
  const auto top = cli("--help").out;
  EXPECT_TRUE(has(top, "heartwave sweep mfhn"));
  for (const char* c : {"model", "model list", "bench", "run", "geometry inspect"}) {
    const auto h = cli(std::string(c) + " --help").out;
    EXPECT_FALSE(has(h, "heartwave sweep mfhn")) << c << " --help repeats the top-level examples";
    EXPECT_TRUE(has(h, "Example")) << c;
  }
}

TEST(CliFirstWeek, GeometryInspectAndRunCheck) {
  const std::string data = HW_TEST_DATA_DIR;
  const auto g = cli("geometry inspect " + data + "/data/geometry/ascii_3x2x2.nrrd");
  EXPECT_EQ(g.code, 0) << g.out;
  EXPECT_TRUE(has(g.out, "3 × 2 × 2 = 12 voxels, float")) << g.out;
  EXPECT_TRUE(has(g.out, "spacing 0.5 × 0.25 × 2 mm")) << g.out;
  EXPECT_EQ(cli("geometry inspect " + data + "/data/geometry/no_such.nrrd").code, 2);  // ExistingFile
  const auto r = cli("run " + data + "/errors/cases/valid.toml --check");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "tissue box")) << r.out;
  EXPECT_TRUE(has(r.out, "stability explicit diffusion needs dt")) << r.out;
  EXPECT_TRUE(has(r.out, "wall time ≈")) << r.out;
}
