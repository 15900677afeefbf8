// GRL1 and GRL2 (runtime/integrators.hpp) and the linear blocks they advance implicitly
// (model/passes/linear_blocks.hpp).
//
// Why: the stiff schemes are only worth having if (a) they keep their formal order where
// the problem is smooth, through the block path too, (b) a Markov chain found by the
// analysis keeps its total occupancy and stays bounded at steps where the explicit
// schemes blow up, and (c) the interpreter and the printed C++ agree on them (that part
// runs for every built-in model in test_codegen, as every integrator does).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "runtime/integrators.hpp"
#include "cell/single_cell.hpp"
#include "model/emit/interpreter.hpp"
#include "model/load.hpp"
#include "model/passes/linear_blocks.hpp"
#include "run/cell_run.hpp"

namespace {

using hw::cell::Integrator;

double ye(int k, double t) {
  switch (k) {
    case 0: return 1.0 + 0.5 * std::sin(t);
    case 1: return 1.0 + 0.5 * std::cos(t);
    default: return 1.0 + 0.25 * std::sin(2 * t);
  }
}
double ye_dot(int k, double t) {
  switch (k) {
    case 0: return 0.5 * std::cos(t);
    case 1: return -0.5 * std::sin(t);
    default: return 0.5 * std::cos(2 * t);
  }
}

// y0, y1: one linear block, y' = A(t)(y − ye) + ye' with a time-dependent, non-symmetric A;
// y2 outside it, non-linear and coupled to y0. (ye0, ye1, ye2) is the exact solution.
struct BlockModel {
  static constexpr int kStates = 3;
  static constexpr int kBlockEntries = 4;
  int n_states() const { return 3; }
  int n_params() const { return 0; }
  int n_constants() const { return 0; }
  bool is_gate(int) const { return false; }
  // constexpr, as printed models have it (kBlockEntries > 0: the blocks are unrolled).
  constexpr int n_blocks() const { return 1; }
  constexpr int block_size(int) const { return 2; }
  constexpr int block_offset(int) const { return 0; }
  constexpr int block_state(int, int r) const { return r; }
  constexpr int block_of(int i) const { return i < 2 ? 0 : -1; }
  void constants(const double*, double*) const {}
  static void matrix(double t, double* A) {
    A[0] = -30 - 10 * std::sin(t);
    A[1] = 25;
    A[2] = 12;
    A[3] = -40 + 5 * std::cos(t);
  }
  void rhs(double t, const double* y, const double* p, const double* c, double* f) const {
    double J[3], A[4];
    rhs_jac_blocks(t, y, p, c, f, J, A);
  }
  void rhs_jac(double t, const double* y, const double* p, const double* c, double* f, double* J) const {
    double A[4];
    rhs_jac_blocks(t, y, p, c, f, J, A);
  }
  void rhs_jac_blocks(double t, const double* y, const double*, const double*, double* f, double* J,
                      double* A) const {
    matrix(t, A);
    const double d0 = y[0] - ye(0, t), d1 = y[1] - ye(1, t);
    f[0] = A[0] * d0 + A[1] * d1 + ye_dot(0, t);
    f[1] = A[2] * d0 + A[3] * d1 + ye_dot(1, t);
    const double e2 = ye(2, t);
    f[2] = ye_dot(2, t) - (y[2] * y[2] * y[2] - e2 * e2 * e2) + (y[0] - ye(0, t));
    J[0] = A[0];
    J[1] = A[3];
    J[2] = -3 * y[2] * y[2];
  }
};

double error_at_end(Integrator method, int n) {
  const BlockModel m;
  double y[3] = {ye(0, 0), ye(1, 0), ye(2, 0)};
  const double T = 2.0, dt = T / n;
  for (int s = 0; s < n; ++s) hw::cell::step_cell<double>(m, method, s * dt, dt, y, static_cast<const double*>(nullptr), static_cast<const double*>(nullptr));
  double e = 0;
  for (int k = 0; k < 3; ++k) e = std::max(e, std::fabs(y[k] - ye(k, T)));
  return e;
}

TEST(StiffIntegrators, BlockPathKeepsFormalOrder) {
  for (Integrator method : {Integrator::grl1, Integrator::grl2}) {
    std::vector<double> e;
    for (int k = 0; k < 4; ++k) e.push_back(error_at_end(method, 40 << k));
    const double q = 0.5 * (std::log2(e[1] / e[2]) + std::log2(e[2] / e[3]));
    std::printf("HW_CONVERGENCE integrator=%s_block expected=%d observed=%.3f\n",
                hw::cell::integrator_name(method), hw::cell::integrator_order(method), q);
    EXPECT_NEAR(q, hw::cell::integrator_order(method), 0.2) << hw::cell::integrator_name(method);
  }
}

TEST(StiffIntegrators, BlockPathIsStableFarBeyondTheExplicitLimit) {
  // |A|·dt ≈ 25 at n = 4: explicit midpoint diverges, the implicit block update does not.
  EXPECT_LT(error_at_end(Integrator::grl2, 4), 0.2);
  EXPECT_LT(error_at_end(Integrator::grl1, 4), 0.5);  // first order at dt 0.5: bounded, not accurate
  EXPECT_FALSE(error_at_end(Integrator::rk2, 4) < 0.2);
}

hw::model::LoadedModel test_model(const char* file) {
  return hw::model::load_model(std::string(HW_TEST_DATA_DIR) + "/data/hwm/" + file);
}
hw::model::LoadedModel markov() { return test_model("markov_channel.hwm"); }
hw::model::LoadedModel buffers() { return test_model("calcium_buffers.hwm"); }

// The state names of block b, in order.
std::vector<std::string> block_names(const hw::model::Model& m, std::size_t b) {
  std::vector<std::string> names;
  for (auto i : m.blocks[b].states) names.push_back(m.states[i].name);
  return names;
}

TEST(LinearBlocks, FindsTheMarkovChainAndOnlyIt) {
  const auto lm = markov();
  const auto& m = lm.analysed;
  ASSERT_EQ(m.blocks.size(), 1u) << hw::model::describe_blocks(m);
  EXPECT_EQ(block_names(m, 0), (std::vector<std::string>{"C", "O", "I"}));
  EXPECT_TRUE(m.blocks[0].conserves);
  for (std::size_t i = 0; i < m.states.size(); ++i) {
    const bool in = m.states[i].name == "C" || m.states[i].name == "O" || m.states[i].name == "I";
    EXPECT_EQ(m.analysis[i].block >= 0, in) << m.states[i].name;
  }
}

// Runs the paced model for 400 ms at dt; returns the final states (NaN on divergence).
std::vector<double> run(const hw::model::LoadedModel& lm, Integrator method, double dt, bool f32 = false) {
  const auto k = hw::model::make_interpreter(lm.analysed);
  const auto setup = hw::cell::make_cell_setup(lm.analysed, lm.stimulus);
  hw::cell::SolverOptions s;
  s.method = method;
  s.dt_ms = dt;
  s.single_precision = f32;
  hw::cell::TraceOptions t;
  t.record = false;
  try {
    return hw::cell::run_single_cell(*k, setup, hw::cell::StimulusTrain::periodic(400, 1, 2), s, t).final_states;
  } catch (const hw::cell::DivergenceError&) {
    return std::vector<double>(setup.initial_states.size(), NAN);
  }
}

TEST(LinearBlocks, ChainConservesOccupancyAndStaysBoundedAtLargeSteps) {
  const auto lm = markov();
  const auto C = *lm.analysed.find_state("C"), O = *lm.analysed.find_state("O"), I = *lm.analysed.find_state("I");
  for (Integrator method : {Integrator::grl1, Integrator::grl2}) {
    for (double dt : {0.01, 0.1, 0.5}) {
      const auto y = run(lm, method, dt);
      EXPECT_NEAR(y[C] + y[O] + y[I], 1.0, 1e-12) << hw::cell::integrator_name(method) << " dt " << dt;
      for (auto k : {C, O, I}) {
        EXPECT_GE(y[k], -1e-9) << hw::cell::integrator_name(method) << " dt " << dt;
        EXPECT_LE(y[k], 1 + 1e-9) << hw::cell::integrator_name(method) << " dt " << dt;
      }
    }
  }
  // The explicit midpoint (rl2 treats each chain state as a gate of the others) at 0.5 ms.
  const auto rl2 = run(lm, Integrator::rl2, 0.5);
  EXPECT_FALSE(std::fabs(rl2[C] + rl2[O] + rl2[I] - 1.0) < 1e-12 && rl2[O] >= 0 && rl2[O] <= 1)
      << "rl2 was expected to lose the chain at dt 0.5 ms; pick a stiffer test model";
}

TEST(LinearBlocks, Grl2MatchesAFineReference) {
  const auto lm = markov();
  const auto ref = run(lm, Integrator::rk4, 0.001);
  for (Integrator method : {Integrator::grl1, Integrator::grl2}) {
    const auto y = run(lm, method, 0.01);
    for (std::size_t k = 0; k < y.size(); ++k)
      EXPECT_NEAR(y[k], ref[k], method == Integrator::grl2 ? 1e-4 : 1e-2) << lm.analysed.states[k].name;
  }
}

// Calcium is left out of the affine blocks (the buffers' rates read it), and then found
// with the two buffers that bind it as a concentration block.
TEST(LinearBlocks, FindsCalciumWithTheBuffersThatBindIt) {
  const auto lm = buffers();
  const auto& m = lm.analysed;
  ASSERT_EQ(m.blocks.size(), 1u) << hw::model::describe_blocks(m);
  EXPECT_EQ(block_names(m, 0), (std::vector<std::string>{"Ca", "B1", "B2"}));
  EXPECT_FALSE(m.blocks[0].conserves);  // calcium enters and leaves
  EXPECT_NE(hw::model::describe_blocks(m).find("a concentration and what binds it"), std::string::npos)
      << hw::model::describe_blocks(m);
}

// Calcium and its buffers 8 ms into a beat, while calcium rises, against a fine reference,
// at steps up to 50 times the fastest buffer's time scale: the block keeps the binding in
// step with calcium; rl2, which advances each buffer with calcium frozen, does not.
TEST(LinearBlocks, ConcentrationBlockHoldsAtLargeSteps) {
  const auto lm = buffers();
  auto at_8ms = [&](Integrator method, double dt) {
    const auto k = hw::model::make_interpreter(lm.analysed);
    const auto setup = hw::cell::make_cell_setup(lm.analysed, lm.stimulus);
    hw::cell::SolverOptions s;
    s.method = method;
    s.dt_ms = dt;
    hw::cell::TraceOptions t;
    t.record = false;
    return hw::cell::run_single_cell(*k, setup, hw::cell::StimulusTrain::periodic(8, 1, 2), s, t).final_states;
  };
  const auto Ca = *lm.analysed.find_state("Ca"), B1 = *lm.analysed.find_state("B1");
  const auto ref = at_8ms(Integrator::rk4, 0.0005);
  for (double dt : {0.01, 0.05}) {
    const auto y = at_8ms(Integrator::grl2, dt);
    std::printf("[measured] calcium_buffers at 8 ms, grl2 dt %g: Ca %.6g mM, B1 %.6g mM (rk4 at 0.0005: %.6g, %.6g)\n",
                dt, y[Ca], y[B1], ref[Ca], ref[B1]);
    EXPECT_NEAR(y[Ca], ref[Ca], 1e-3 * ref[Ca]) << "dt " << dt;
    EXPECT_NEAR(y[B1], ref[B1], 1e-3 * ref[B1]) << "dt " << dt;
  }
  const auto rl2 = at_8ms(Integrator::rl2, 0.05);
  EXPECT_GT(std::fabs(rl2[Ca] - ref[Ca]), 5e-3 * ref[Ca]) << "rl2 was expected to lag at dt 0.05; pick stiffer buffers";
}

TEST(Divergence, NamesTheStateTimeAndFix) {
  const auto lm = markov();
  const auto k = hw::model::make_interpreter(lm.analysed);
  const auto setup = hw::cell::make_cell_setup(lm.analysed, lm.stimulus);
  hw::cell::SolverOptions s;
  s.method = Integrator::fe;
  s.dt_ms = 0.5;
  hw::cell::TraceOptions t;
  t.record = false;
  try {
    hw::cell::run_single_cell(*k, setup, hw::cell::StimulusTrain::periodic(400, 1, 2), s, t);
    FAIL() << "forward Euler at 0.5 ms was expected to diverge on the chain";
  } catch (const hw::cell::DivergenceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("is not finite at t = "), std::string::npos) << what;
    EXPECT_NE(what.find("stiffest state"), std::string::npos) << what;
    EXPECT_NE(what.find("grl2"), std::string::npos) << what;
    EXPECT_GT(e.time_ms, 0);
    EXPECT_FALSE(e.state.empty());
  }
}

}  // namespace

namespace {

// Courtemanche 1998 in float: the exact diagonal of its release gates overflows (inf/inf)
// where the functions are finite; GRL and SBE take those states explicitly instead of going
// NaN on the first step, and the beat matches double's.
TEST(StiffIntegrators, FloatSurvivesADiagonalThatOverflows) {
  const double apd_double = [] {
    hw::run::CellRunOptions o;
    o.model = "courtemanche_1998";
    o.integrator = "grl2";
    o.beats = 1;
    auto p = hw::run::prepare_cell(o);
    hw::cell::TraceOptions t;
    t.record = false;
    return hw::cell::run_single_cell(*p.kernel, p.setup, p.train, p.solver, t).beats.back().apd90;
  }();
  for (const char* method : {"grl1", "grl2", "sbe"}) {
    hw::run::CellRunOptions o;
    o.model = "courtemanche_1998";
    o.integrator = method;
    o.beats = 1;
    o.single_precision = true;
    auto p = hw::run::prepare_cell(o);
    hw::cell::TraceOptions t;
    t.record = false;
    double apd = NAN;
    EXPECT_NO_THROW(apd = hw::cell::run_single_cell(*p.kernel, p.setup, p.train, p.solver, t).beats.back().apd90)
        << method;
    std::printf("[measured] courtemanche_1998 %s float: APD90 %.3f ms (grl2 double %.3f ms)\n", method, apd,
                apd_double);
    EXPECT_NEAR(apd, apd_double, std::string(method) == "grl2" ? 1.0 : 10.0) << method;
  }
}

}  // namespace
