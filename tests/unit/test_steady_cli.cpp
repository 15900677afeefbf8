// The steady-state options end to end: `cell --until-steady/--save-state/--initial-state`,
// restitution from a saved state and its --beats/--stim-start rules, and the warning for a
// cell that does not follow its pacing (docs/single-cell.md, "Steady states").
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_test_support.hpp"

namespace {

using hw::cli_test::CliRun;
using hw::cli_test::has;

// stdout, or stderr with `err`; the other discarded.
CliRun cli(const std::string& args, bool err = false) {
  return hw::cli_test::cli(args, err ? hw::cli_test::Capture::err : hw::cli_test::Capture::out);
}

std::string temp(const std::string& name) { return hw::cli_test::temp_file("hw_steady_cli_", name); }

}  // namespace

TEST(SteadyCli, UntilSteadySavesAndRestitutionStartsFromIt) {
  const std::string state = temp("lr91.state");
  std::filesystem::remove(state);
  const CliRun r = cli("cell luo_rudy_1991 --until-steady 1e-5 --beats 50 --save-state " + state + " --json");
  ASSERT_EQ(r.code, 0);
  EXPECT_TRUE(has(r.out, "\"steady_beat\": ") || has(r.out, "\"steady_beat\":")) << r.out;
  EXPECT_TRUE(has(r.out, "\"state_change\"")) << r.out;
  EXPECT_FALSE(has(r.out, "\"steady_beat\": 0,") || has(r.out, "\"steady_beat\":0,")) << r.out;
  std::ifstream in(state);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_TRUE(has(text, "model = \"luo_rudy_1991\"")) << text;
  EXPECT_TRUE(has(text, "[states]")) << text;

  // The text report names the steady beat.
  EXPECT_TRUE(has(cli("cell luo_rudy_1991 --until-steady 1e-5 --beats 50").out, "steady at beat"));
  // Not steady within the cap: a warning that says so.
  const CliRun tight = cli("cell luo_rudy_1991 --until-steady 1e-15 --beats 2", true);
  EXPECT_EQ(tight.code, 0);
  EXPECT_TRUE(has(tight.out, "not steady within 2 beats")) << tight.out;

  // Restitution's S1 beats from the saved state; same pacing, no warning.
  const CliRun rest = cli("restitution luo_rudy_1991 --initial-state " + state + " --n-s1 1 --s2 500:500:1");
  EXPECT_EQ(rest.code, 0);
  EXPECT_TRUE(has(rest.out, "500,")) << rest.out;
  EXPECT_EQ(cli("restitution luo_rudy_1991 --initial-state " + state + " --n-s1 1 --s2 500:500:1", true).out, "");
  // Paced otherwise: a warning; another model: refused, exit 1.
  EXPECT_TRUE(has(cli("cell luo_rudy_1991 --beats 1 --bcl 600 --initial-state " + state, true).out,
                  "BCL 1000 ms (now 600)"));
  const CliRun other = cli("cell beeler_reuter_1977 --beats 1 --initial-state " + state, true);
  EXPECT_EQ(other.code, 1);
  EXPECT_TRUE(has(other.out, "belongs to model 'luo_rudy_1991'")) << other.out;
  std::filesystem::remove(state);
}

// --beats is the number of S1 beats without --n-s1 (the same rows); both, or options the
// protocol would ignore, are usage errors; --stim-start is honoured.
TEST(SteadyCli, RestitutionTakesNoOptionItIgnores) {
  const CliRun beats = cli("restitution mfhn --beats 2 --s2 400:400:1");
  const CliRun n_s1 = cli("restitution mfhn --n-s1 2 --s2 400:400:1");
  ASSERT_EQ(beats.code, 0);
  EXPECT_EQ(beats.out, n_s1.out);
  EXPECT_NE(beats.out, cli("restitution mfhn --beats 1 --s2 400:400:1").out);
  EXPECT_EQ(cli("restitution mfhn --beats 2 --n-s1 2 --s2 400:400:1").code, 2);
  EXPECT_EQ(cli("restitution mfhn --dynamic 500:1000:500 --n-s1 3").code, 2);
  EXPECT_EQ(cli("restitution mfhn --dynamic 500:1000:500 --s2 400:500:100").code, 2);
  EXPECT_EQ(cli("restitution mfhn --model-stimulus").code, 2);
  EXPECT_EQ(cli("restitution mfhn --n-s1 1 --stim-start 20 --s2 400:400:1").code, 0);
}

TEST(SteadyCli, WarnsWhenTheCellDoesNotFollowThePacing) {
  const CliRun block = cli("cell luo_rudy_1991 --bcl 200 --beats 10", true);
  EXPECT_EQ(block.code, 0);
  EXPECT_TRUE(has(block.out, "does not follow the pacing")) << block.out;
  EXPECT_FALSE(has(cli("cell luo_rudy_1991 --beats 2", true).out, "does not follow"));
}
