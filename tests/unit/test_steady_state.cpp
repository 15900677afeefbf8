// Steady states (cell/steady_state.hpp), the state file (run/state_file.hpp), starting from
// it (cell/saved_state.hpp, a case's [[model]] initial_state), the upstroke check
// (cell/pacing_response.hpp) and restitution's --beats/--stim-start.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "cell/restitution.hpp"
#include "cell/saved_state.hpp"
#include "cell/steady_state.hpp"
#include "run/case_file.hpp"
#include "run/cell_run.hpp"
#include "run/state_file.hpp"
#include "tissue/reaction.hpp"

namespace {

namespace fs = std::filesystem;

hw::run::CellRunOptions lr91(double bcl = 1000, int beats = 3) {
  hw::run::CellRunOptions o;
  o.model = "luo_rudy_1991";
  o.bcl_ms = bcl;
  o.beats = beats;
  return o;
}

hw::cell::SingleCellResult run(const hw::run::PreparedCell& p, double tol = 0) {
  hw::cell::TraceOptions t;
  t.record = false;
  hw::cell::PacingControl c;
  c.steady_tolerance = tol;
  return hw::cell::run_single_cell(*p.kernel, p.setup, p.train, p.solver, t, c);
}

std::string temp(const std::string& name) { return (fs::temp_directory_path() / ("hw_steady_" + name)).string(); }

}  // namespace

TEST(SteadyState, RelativeChangeIsTheLargestOverStates) {
  EXPECT_DOUBLE_EQ(hw::cell::relative_state_change({1, 0, -80}, {1, 0, -80}), 0);
  EXPECT_NEAR(hw::cell::relative_state_change({1, 2e-4, -80}, {1, 1e-4, -80}), 0.5, 1e-12);  // a small Ca counts
  EXPECT_NEAR(hw::cell::relative_state_change({0.5, 1, -80}, {0.5, 1, -80.8}), 0.8 / 80.8, 1e-12);
}

// LR91 at 1 Hz settles within a few beats: the run stops at the first beat whose state
// change is below TOL, every change before it is not, and the state is that beat's end.
TEST(SteadyState, StopsAtTheFirstSteadyBeatWithinTheCap) {
  const auto p = hw::run::prepare_cell(lr91(1000, 50));
  const auto r = run(p, 1e-5);
  ASSERT_GT(r.steady_beat, 1);
  EXPECT_LT(r.steady_beat, 50);
  EXPECT_EQ(int(r.beats.size()), r.steady_beat);
  ASSERT_EQ(r.beat_changes.size(), r.beats.size());
  EXPECT_LT(r.beat_changes.back(), 1e-5);
  for (std::size_t i = 0; i + 1 < r.beat_changes.size(); ++i) EXPECT_GE(r.beat_changes[i], 1e-5);
  // The same beats paced without the test end in the same state.
  const auto q = run(hw::run::prepare_cell(lr91(1000, r.steady_beat)));
  for (std::size_t i = 0; i < q.final_states.size(); ++i) EXPECT_DOUBLE_EQ(q.final_states[i], r.final_states[i]);
  // Too tight for the cap: runs every beat, not steady.
  const auto tight = run(hw::run::prepare_cell(lr91(1000, 3)), 1e-15);
  EXPECT_EQ(tight.steady_beat, 0);
  EXPECT_EQ(tight.beats.size(), 3u);
}

TEST(SteadyState, CvodeStopsToo) {
  auto o = lr91(1000, 30);
  o.integrator = "cvode";
  const auto r = run(hw::run::prepare_cell(o), 1e-5);
  EXPECT_GT(r.steady_beat, 1);
  EXPECT_EQ(int(r.beats.size()), r.steady_beat);
}

// Saved, read back and started from: the same states, the identity and pacing kept; a run
// from it continues where the first left off.
TEST(StateFile, RoundTripAndContinue) {
  auto o = lr91(1000, 4);
  o.params = {{"g_Na", 20.0}};
  const auto p = hw::run::prepare_cell(o);
  const auto r = run(p);
  const std::string path = temp("lr91.state");
  hw::run::write_state_file(path, hw::run::saved_state(p, o, r.final_states, 4));
  const auto s = hw::run::read_state_file(path);
  EXPECT_EQ(s.model, "luo_rudy_1991");
  EXPECT_EQ(s.model_sha256.size(), 64u);
  EXPECT_EQ(s.bcl_ms, 1000);
  EXPECT_EQ(s.beats, 4);
  ASSERT_EQ(s.params.size(), 1u);
  EXPECT_EQ(s.params[0].second, 20.0);
  ASSERT_EQ(s.states.size(), r.final_states.size());
  for (std::size_t i = 0; i < s.states.size(); ++i) EXPECT_EQ(s.states[i].second, r.final_states[i]);  // exact

  auto from = lr91(1000, 2);
  from.params = o.params;
  from.initial_state = path;
  const auto p2 = hw::run::prepare_cell(from);
  EXPECT_TRUE(p2.state_warnings.empty());
  const auto cont = run(p2);
  const auto whole = run(hw::run::prepare_cell([&] { auto w = o; w.beats = 6; return w; }()));
  for (std::size_t i = 0; i < whole.final_states.size(); ++i)
    EXPECT_NEAR(cont.final_states[i], whole.final_states[i], 1e-9 * (1 + std::fabs(whole.final_states[i])));

  // Paced otherwise: one warning naming the differences.
  auto other = lr91(500, 1);
  other.initial_state = path;
  const auto p3 = hw::run::prepare_cell(other);
  ASSERT_EQ(p3.state_warnings.size(), 1u);
  EXPECT_NE(p3.state_warnings[0].find("BCL 1000 ms (now 500)"), std::string::npos) << p3.state_warnings[0];
  EXPECT_NE(p3.state_warnings[0].find("g_Na = 20"), std::string::npos) << p3.state_warnings[0];
  fs::remove(path);
}

TEST(StateFile, AnotherModelsOrIncompleteStateIsRefused) {
  const auto p = hw::run::prepare_cell(lr91(1000, 1));
  hw::cell::SavedState s = hw::cell::make_saved_state(p.setup, p.setup.initial_states, "");
  s.source = "x.state";
  s.model = "beeler_reuter_1977";
  hw::cell::CellSetup setup = p.setup;
  try {
    hw::cell::apply_saved_state(setup, s, "");
    FAIL();
  } catch (const hw::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("belongs to model 'beeler_reuter_1977'"), std::string::npos) << e.what();
  }
  s.model = "luo_rudy_1991";
  s.states.erase(s.states.begin() + 1);  // m
  try {
    hw::cell::apply_saved_state(setup, s, "");
    FAIL();
  } catch (const hw::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("lacks 1 of model 'luo_rudy_1991''s 8 states (m)"), std::string::npos)
        << e.what();
  }
  // Not a state file at all: located.
  const std::string path = temp("bad.state");
  std::ofstream(path) << "format = \"heartwave-cell-state\"\nmodel = \"luo_rudy_1991\"\n[states]\nV = \"high\"\n";
  try {
    hw::run::read_state_file(path);
    FAIL();
  } catch (const hw::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("states.V must be a number"), std::string::npos) << e.what();
  }
  fs::remove(path);
}

// The upstroke check: 1:1 at 1 Hz, 2:1 block at BCL 200 ms (LR91).
TEST(PacingResponse, OneToOneAndBlock) {
  const auto ok = run(hw::run::prepare_cell(lr91(1000, 3)));
  EXPECT_TRUE(ok.response.follows());
  EXPECT_EQ(ok.response.warning(1000), "");
  const auto block = run(hw::run::prepare_cell(lr91(200, 10)));
  EXPECT_FALSE(block.response.follows());
  EXPECT_EQ(block.response.stimuli, 4);
  EXPECT_EQ(block.response.total(), 2);
  EXPECT_NE(block.response.warning(200).find("fail to capture"), std::string::npos);
}

// A cell that fires by itself (a synthetic trace: three action potentials per beat).
TEST(PacingResponse, SelfOscillationCounted) {
  hw::cell::UpstrokeCounter c(1);
  for (int beat = 0; beat < 4; ++beat) {
    c.begin_beat();
    for (int k = 0; k < 300; ++k) c.sample(k % 100 >= 70 ? 40.0 : -85.0);
  }
  const auto r = c.result();
  EXPECT_EQ(r.stimuli, 4);
  EXPECT_EQ(r.total(), 12);
  EXPECT_NE(r.warning(1000).find("fires on its own"), std::string::npos);
}

// --stim-start delays the S1 train (a cell at rest before it gives the same rows), and the
// S1 beats can start from a saved state.
TEST(Restitution, StimStartAndInitialState) {
  const auto p = hw::run::prepare_cell(lr91());
  hw::cell::RestitutionOptions r;
  r.n_s1 = 2;
  r.duration_ms = p.stim_duration_ms;
  r.coupling_ms = {500};
  std::vector<double> end;
  const auto base = hw::cell::run_s1s2(*p.kernel, p.setup, r, p.solver, &end);
  r.start_ms = 50;
  const auto late = hw::cell::run_s1s2(*p.kernel, p.setup, r, p.solver);
  EXPECT_NEAR(late[0].apd90_s1, base[0].apd90_s1, 0.2);  // LR91 rests near its initial state
  // From the state the S1 beats ended in: one more S1 beat gives the third beat's APD.
  hw::cell::CellSetup from = p.setup;
  from.initial_states = end;
  r.start_ms = 0;
  r.n_s1 = 1;
  const auto next = hw::cell::run_s1s2(*p.kernel, from, r, p.solver);
  r.n_s1 = 3;
  const auto three = hw::cell::run_s1s2(*p.kernel, p.setup, r, p.solver);
  EXPECT_NEAR(next[0].apd90_s1, three[0].apd90_s1, 1e-6);
}

// [[model]] initial_state: every state of the region from the file; [[initial]] overrides.
TEST(CaseInitialState, SetsEveryStateAndInitialOverrides) {
  const auto p = hw::run::prepare_cell(lr91(1000, 3));
  const auto r = run(p);
  const fs::path dir = fs::temp_directory_path() / "hw_steady_case";
  fs::create_directories(dir);
  hw::run::write_state_file((dir / "lr91.state").string(), hw::run::saved_state(p, lr91(1000, 3), r.final_states, 3));
  const std::string toml = R"([grid]
size = [4, 4]
spacing = [0.25, 0.25]
[time]
t_end = 1
dt = 0.01
[[model]]
name = "luo_rudy_1991"
initial_state = "lr91.state"
[[initial]]
variable = "Cai"
value = 0.0005
)";
  const auto c = hw::io::parse_case(toml, (dir / "case.toml").string());
  ASSERT_TRUE(c.models[0].initial_state);
  const hw::tissue::SimSetup s = hw::tissue::make_sim_setup(c);
  const auto& y = s.parts.at(0).setup.initial_states;
  ASSERT_EQ(y.size(), r.final_states.size());
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_EQ(y[i], r.final_states[i]);
  ASSERT_EQ(s.initial.size(), 1u);  // the [[initial]] entry, applied after
  EXPECT_EQ(s.initial[0].value, 0.0005);
  ASSERT_FALSE(s.state_notes.empty());
  EXPECT_NE(s.state_notes[0].find("every state from"), std::string::npos);

  // Another model's state: an error at the case's key.
  const std::string other = std::string(toml).replace(toml.find("luo_rudy_1991"), 13, "beeler_reuter_1977");
  try {
    hw::tissue::make_sim_setup(hw::io::parse_case(other, (dir / "case.toml").string()));
    FAIL();
  } catch (const hw::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("model[0].initial_state"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}
