// The live run without a browser (live/session): a click starts a wave where it lands, the
// frame is the field at the layout's cells, a refused control leaves the run as it was, a
// changed parameter takes effect, and the action log replays to the same V, bit for bit.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "live/session.hpp"
#include "run/case_file.hpp"
#include "tissue/simulation.hpp"

using namespace hw::live;
using namespace hw::tissue;

namespace {

// A quiescent Aliev-Panfilov sheet, 30 × 30 cells (explicit dt limit 0.0625 ms).
TissueCase quiet_sheet(const std::string& dir) {
  const std::string toml = fmt::format(R"(
name = "live_sheet"
[grid]
length = [15, 15]
spacing = 0.5
[conductivity]
diffusivity = 1.0
chi = 140
cm = 0.01
[[model]]
name = "aliev_panfilov_1996"
[time]
dt = 0.02
t_end = 1000
integrator = "rl1"
[output]
directory = "{}"
activation_map = true
activation_threshold = 0.5
probes = [{{ name = "centre", position = [7.5, 7.5] }}]
)",
                                       dir);
  return hw::io::parse_case(toml, "live_sheet.toml");
}

std::string scratch(const char* name) {
  const auto d = std::filesystem::temp_directory_path() / fmt::format("hw_live_{}_{}", name, ::getpid());
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d.string();
}

LiveOptions cpu_options(const std::string& log = "") {
  LiveOptions o;
  o.sim.backend = Backend::cpu;
  o.sim.threads = 1;
  o.log_path = log;
  return o;
}

std::size_t cell(const Simulation& s, double x, double y) {
  return s.grid().index(int(x / s.grid().h[0]), int(y / s.grid().h[1]), 0);
}

}  // namespace

TEST(LiveSession, AClickStartsAWaveWhereItLands) {
  LiveRun run(quiet_sheet(scratch("click")), cpu_options());
  ASSERT_TRUE(run.run_to_step(20));
  const std::size_t at = cell(run.simulation(), 4.2, 11.3), far = cell(run.simulation(), 14, 1);
  EXPECT_LT(run.simulation().voltage_at(at), 0.1);
  EXPECT_EQ(run.submit(R"({"op":"stimulate","x":4.2,"y":11.3})"), "");
  ASSERT_TRUE(run.run_to_step(20 + 150));  // 3 ms
  EXPECT_GT(run.simulation().voltage_at(at), 0.5);
  EXPECT_LT(run.simulation().voltage_at(far), 0.1);  // not yet there
  EXPECT_EQ(run.simulation().stimuli(), 1u);
  // The page's probe reads the engine there.
  EXPECT_EQ(run.submit(R"({"op":"probe","x":4.2,"y":11.3})"), "");
  EXPECT_NE(run.last_reply().find("\"ok\":true"), std::string::npos) << run.last_reply();
}

TEST(LiveSession, TheFrameIsTheFieldAtTheLayoutsCells) {
  LiveRun run(quiet_sheet(scratch("frame")), cpu_options());
  run.submit(R"({"op":"stimulate","x":7,"y":7})");
  run.run_to_step(100);
  Field<float> v;
  run.simulation().voltage(v);
  const std::vector<float> f = run.frame_values();
  ASSERT_EQ(f.size(), run.layout().cells.size());
  for (std::size_t i = 0; i < f.size(); ++i) ASSERT_EQ(f[i], v[run.layout().cells[i]]) << i;
  // The state v, by the view control.
  EXPECT_EQ(run.submit(R"({"op":"view","name":"v"})"), "");
  Field<float> w;
  ASSERT_TRUE(run.simulation().field("v", w));
  const std::vector<float> g = run.frame_values();
  for (std::size_t i = 0; i < g.size(); ++i) ASSERT_EQ(g[i], w[run.layout().cells[i]]) << i;
  const std::string frame = run.make_frame(true);
  EXPECT_EQ(frame.substr(0, 4), "HWF1");
}

TEST(LiveSession, ARefusedControlLeavesTheRunAsItWas) {
  LiveRun run(quiet_sheet(scratch("refuse")), cpu_options());
  run.run_to_step(10);
  const auto before = run.simulation().save_state();
  // σ × 10 puts dt = 0.02 ms above the explicit limit (0.00625 ms): refused, the run untouched.
  const std::string why = run.submit(R"({"op":"set","name":"conductivity.scale","value":10})");
  EXPECT_NE(why.find("above the explicit diffusion's limit"), std::string::npos) << why;
  EXPECT_NE(run.submit(R"({"op":"stimulate","x":1e999,"y":1})"), "");
  EXPECT_NE(run.submit(R"({"op":"stimulate","x":3,"y":1,"amplitude":1e6})"), "");
  EXPECT_NE(run.submit(R"({"op":"restore","name":"never"})").find("no checkpoint 'never'"), std::string::npos);
  EXPECT_NE(run.submit("garbage"), "");
  EXPECT_EQ(run.simulation().save_state(), before);
  EXPECT_EQ(run.simulation().stimuli(), 0u);
  EXPECT_TRUE(run.run_to_step(20));
}

TEST(LiveSession, AConductivityChangeTakesEffect) {
  // The same click on two runs, one with σ doubled: the wave reaches a far cell sooner.
  auto arrival = [](double scale) {
    LiveRun run(quiet_sheet(scratch("sigma")), cpu_options());
    if (scale != 1) EXPECT_EQ(run.submit(fmt::format(R"({{"op":"set","name":"conductivity.scale","value":{}}})", scale)), "");
    EXPECT_EQ(run.submit(R"({"op":"stimulate","x":1.5,"y":7.5,"radius":2.5,"amplitude":1.4})"), "");
    const std::size_t far = cell(run.simulation(), 12, 7.5);
    for (long n = 1; n < 2000; ++n) {
      run.run_to_step(n);
      if (run.simulation().voltage_at(far) > 0.5) return run.simulation().time();
    }
    return 1e9;
  };
  const double slow = arrival(1), fast = arrival(2);
  std::printf("[measured] the wave reaches x = 12 mm at %.2f ms (σ × 1), %.2f ms (σ × 2)\n", slow, fast);
  EXPECT_LT(fast, 0.85 * slow);  // speed ∝ √σ: about 0.71
}

TEST(LiveSession, TheActionLogReplaysToTheSameV) {
  const std::string dir = scratch("replay");
  const std::string log = dir + "/live-actions.jsonl";
  const TissueCase c = quiet_sheet(dir);
  std::vector<std::uint8_t> live_state;
  Field<float> live_v;
  {
    LiveRun run(c, cpu_options(log));
    run.run_to_step(13);
    ASSERT_EQ(run.submit(R"({"op":"stimulate","x":3.3,"y":4.1,"amplitude":1.1,"duration":1.3})"), "");
    run.run_to_step(200);
    ASSERT_EQ(run.submit(R"({"op":"pause"})"), "");
    ASSERT_EQ(run.submit(R"({"op":"set","name":"conductivity.scale","value":1.7})"), "");
    ASSERT_EQ(run.submit(R"({"op":"resume"})"), "");
    run.run_to_step(350);
    ASSERT_EQ(run.submit(R"({"op":"save","name":"a"})"), "");
    ASSERT_EQ(run.submit(R"({"op":"set","name":"time.dt","value":0.01})"), "");  // steps re-counted
    run.run_to_step(run.simulation().steps_done() + 333);
    ASSERT_EQ(run.submit(R"({"op":"stimulate","x":12,"y":12})"), "");
    ASSERT_NE(run.submit(R"({"op":"stimulate","x":99,"y":12})"), "");  // refused: logged, not replayed
    run.run_to_step(run.simulation().steps_done() + 250);
    ASSERT_EQ(run.submit(R"({"op":"restore","name":"a"})"), "");
    ASSERT_EQ(run.submit(R"({"op":"stimulate","x":10,"y":3})"), "");
    run.run_to_step(run.simulation().steps_done() + 400);
    run.end_log();
    live_state = run.simulation().save_state();
    run.simulation().voltage(live_v);
    EXPECT_TRUE(std::filesystem::exists(dir + "/live-a.hwck"));
  }
  std::size_t applied = 0;
  const auto again = replay(c, cpu_options(), log, &applied);
  EXPECT_EQ(applied, 9u);
  Field<float> v;
  again->simulation().voltage(v);
  ASSERT_EQ(v.size(), live_v.size());
  double vmax = 0;
  for (std::size_t n = 0; n < v.size(); ++n) {
    ASSERT_EQ(std::memcmp(&v[n], &live_v[n], sizeof(float)), 0) << "cell " << n;
    vmax = std::max(vmax, double(v[n]));
  }
  EXPECT_GT(vmax, 0.5);  // a wave is there to compare
  EXPECT_EQ(again->simulation().save_state(), live_state);
}

TEST(LiveSession, AReplayOfABrokenLogSaysWhere) {
  const std::string dir = scratch("badlog");
  const std::string log = dir + "/bad.jsonl";
  std::ofstream(log) << "{\"event\":\"start\",\"step\":0}\n{\"step\":5,\"op\":\"stimulate\",\"x\":500,\"y\":1}\n";
  try {
    replay(quiet_sheet(dir), cpu_options(), log);
    FAIL() << "expected an InputError";
  } catch (const hw::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.jsonl:2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
  }
}
