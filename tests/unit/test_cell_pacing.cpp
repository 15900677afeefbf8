// Pacing: step-aligned stimulus timing, the model rewrite, and the single-cell runner.
#include <gtest/gtest.h>

#include <cmath>

#include "cell/cell_setup.hpp"
#include "cell/pacing.hpp"
#include "cell/single_cell.hpp"
#include "cell_test_models.hpp"

using namespace hw::cell;
using hw::model::Model;
using hw::model::Op;
using hw::model::StimulusInfo;
using hw::model::prepare_pacing;
using hw::model::evaluate;

TEST(Pacing, ScheduleAlignsEdgesToSteps) {
  const auto train = StimulusTrain::periodic(1000.0, 3, 2.0, 0.0);
  const StepSchedule s(train, 0.01);
  EXPECT_EQ(s.total_steps(), 300000);
  EXPECT_EQ(s.width(), 200);
  EXPECT_TRUE(s.on(0));
  EXPECT_TRUE(s.on(199));
  EXPECT_FALSE(s.on(200));
  EXPECT_FALSE(s.on(99999));
  EXPECT_TRUE(s.on(100000));
  EXPECT_TRUE(s.on(200199));
  EXPECT_FALSE(s.on(200200));
  EXPECT_EQ(s.edges(), (std::vector<long>{0, 200, 100000, 100200, 200000, 200200, 300000}));
}

TEST(Pacing, BadProtocolsAreInputErrors) {
  EXPECT_THROW(StimulusTrain::periodic(-1.0, 3, 1.0), hw::InputError);
  EXPECT_THROW(StimulusTrain::periodic(1000.0, 0, 1.0), hw::InputError);
  EXPECT_THROW(StimulusTrain::periodic(1000.0, 3, 2000.0), hw::InputError);
  EXPECT_THROW(StepSchedule(StimulusTrain::periodic(1000.0, 3, 1.0), 0.0), hw::InputError);
}

TEST(Pacing, StimulusIsAppliedAtTheRightTimes) {
  // dV/dt = amp·on: V is the stimulus time delivered so far.
  const ConceptKernel<cell_models::Counter> k(cell_models::Counter{});
  const auto setup = cell_models::counter_setup();
  for (bool single : {false, true}) {
    SolverOptions solver;
    solver.method = Integrator::fe;
    solver.single_precision = single;
    solver.dt_ms = 0.01;
    TraceOptions trace;
    trace.interval_ms = 0.5;
    const auto r = run_single_cell(k, setup, StimulusTrain::periodic(100.0, 3, 2.0, 5.0),
                                   solver, trace);
    auto v_at = [&](double t) {
      const auto row = static_cast<std::size_t>(std::lround(t / 0.5));
      EXPECT_NEAR(r.trace.at(row, 0), t, 1e-9);
      return r.trace.at(row, 1);
    };
    const double tol = single ? 1e-4 : 1e-9;
    EXPECT_NEAR(v_at(5.0), 0.0, tol);
    EXPECT_NEAR(v_at(6.0), 1.0, tol);
    EXPECT_NEAR(v_at(7.0), 2.0, tol);
    EXPECT_NEAR(v_at(50.0), 2.0, tol);
    EXPECT_NEAR(v_at(106.0), 3.0, tol);
    EXPECT_NEAR(v_at(305.0), 6.0, tol);
    EXPECT_EQ(r.beats.size(), 3u);
    EXPECT_EQ(r.trace.columns[0], "t");
    EXPECT_EQ(r.trace.columns[1], "V");
  }
}

TEST(Pacing, RewritesTheModelStimulusKeepingItsSignAndAmplitude) {
  // i_stim = piecewise(t >= 10 && t <= 10 + 1, -stim_amplitude, 0); dV/dt = -i_stim.
  Model m;
  m.name = "toy";
  m.states.push_back({});
  m.states[0].name = "V";
  m.states[0].initial = -80;
  for (auto [n, v] : {std::pair{"stim_amplitude", 52.0}, {"stim_start", 10.0}, {"stim_duration", 1.0}}) {
    hw::model::Parameter p;
    p.name = n;
    p.value = v;
    m.parameters.push_back(p);
  }
  auto& P = m.pool;
  const auto t = P.time();
  const auto cond = P.make(Op::logical_and, {P.make(Op::ge, {t, P.param(1)}),
                                             P.make(Op::le, {t, P.add(P.param(1), P.param(2))})});
  hw::model::Algebraic stim;
  stim.name = "i_stim";
  stim.expr = P.make(Op::piecewise, {cond, P.neg(P.param(0)), P.constant(0)});
  m.algebraics.push_back(stim);
  m.derivatives.push_back(P.neg(P.algebraic(0)));
  m.roles.voltage_state = 0;
  m.roles.stimulus_current = 0;
  m.roles.stimulus_amplitude = 0;

  const StimulusInfo info = prepare_pacing(m);

  EXPECT_EQ(info.kind, StimulusInfo::Kind::rewritten);
  ASSERT_TRUE(info.default_amplitude);
  EXPECT_NEAR(*info.default_amplitude, -52.0, 1e-12);
  ASSERT_TRUE(info.default_duration_ms);
  EXPECT_NEAR(*info.default_duration_ms, 1.0, 1e-9);
  EXPECT_EQ(info.amplitude_param, "stim_amplitude");
  EXPECT_EQ(info.amplitude_scale, -1.0);
  const auto on = m.find_parameter(info.on_param);
  ASSERT_TRUE(on);
  std::vector<double> p;
  for (const auto& q : m.parameters) p.push_back(q.value);
  EXPECT_EQ(evaluate(m, m.algebraics[0].expr, 10.5, nullptr, &p), 0.0);  // switch off
  p[*on] = 1.0;
  EXPECT_EQ(evaluate(m, m.algebraics[0].expr, 500.0, nullptr, &p), -52.0);  // any time
  EXPECT_EQ(info.depolarising_sign, 1.0);  // dV/dt = +stim_amplitude while on
}

// A stimulus of amplitude 0 in the file (Noble 1962 in ../shared) entering as
// dV/dt = −i_stim: a magnitude asked for on the command line must still depolarise.
TEST(Pacing, AZeroStimulusGetsTheSignThatDepolarises) {
  Model m;
  m.name = "zero_stim";
  m.states.push_back({});
  m.states[0].name = "V";
  m.states[0].initial = -80;
  hw::model::Parameter a;
  a.name = "stim_amplitude";
  a.value = 0.0;
  m.parameters.push_back(a);
  hw::model::Algebraic stim;
  stim.name = "i_stim";
  stim.expr = m.pool.param(0);
  m.algebraics.push_back(stim);
  m.derivatives.push_back(m.pool.neg(m.pool.algebraic(0)));
  m.roles.voltage_state = 0;
  m.roles.stimulus_current = 0;
  const StimulusInfo info = prepare_pacing(m);
  EXPECT_EQ(info.depolarising_sign, -1.0);
  CellSetup s = make_cell_setup(m, info);
  s.set_stimulus_magnitude(200);
  std::vector<double> p = s.params;
  p[*m.find_parameter(info.on_param)] = 1.0;
  EXPECT_GT(evaluate(m, m.derivatives[0], 0.0, nullptr, &p), 0.0);  // V rises
  s.set_stimulus_magnitude(-200);  // a magnitude: the sign given does not matter
  p = s.params;
  p[*m.find_parameter(info.on_param)] = 1.0;
  EXPECT_GT(evaluate(m, m.derivatives[0], 0.0, nullptr, &p), 0.0);
}

TEST(Pacing, ModelWithoutStimulusGetsAnAdditiveTerm) {
  Model m;
  m.states.push_back({});
  m.states[0].name = "V";
  m.derivatives.push_back(m.pool.constant(0.0));
  m.roles.voltage_state = 0;
  const auto info = prepare_pacing(m);
  EXPECT_EQ(info.kind, StimulusInfo::Kind::additive);
  EXPECT_FALSE(info.default_amplitude);
  std::vector<double> p{0.0, 0.0};
  p[*m.find_parameter(info.on_param)] = 1.0;
  p[*m.find_parameter(info.amplitude_param)] = 3.0;
  EXPECT_EQ(evaluate(m, m.derivatives[0], 0.0, nullptr, &p), 3.0);
  EXPECT_EQ(info.depolarising_sign, 1.0);
}

TEST(Pacing, ModelWithoutVoltageIsAnInputError) {
  Model m;
  EXPECT_THROW(prepare_pacing(m), hw::InputError);
}

TEST(SingleCell, MitchellSchaefferBeatsRepeat) {
  const ConceptKernel<cell_models::MitchellSchaeffer> k(cell_models::MitchellSchaeffer{});
  SolverOptions solver;
  solver.dt_ms = 0.01;
  TraceOptions trace;
  trace.record = false;
  const auto r = run_single_cell(k, cell_models::ms_setup(), StimulusTrain::periodic(500, 3, 1.0),
                                 solver, trace);
  ASSERT_EQ(r.beats.size(), 3u);
  for (const auto& b : r.beats) {
    EXPECT_GT(b.v_peak, 0.9);
    EXPECT_GT(b.apd90, 150.0);
    EXPECT_LT(b.apd90, 400.0);
    EXPECT_LT(b.apd30, b.apd50);
    EXPECT_LT(b.apd50, b.apd90);
  }
  EXPECT_NEAR(r.beats[1].apd90, r.beats[2].apd90, 5.0);
}

TEST(SingleCell, TraceCsvHasHeader) {
  Trace t;
  t.columns = {"t", "V", "h"};
  t.data = {0, -80, 1, 0.5, -79.5, 0.25};
  std::ostringstream out;
  write_trace_csv(t, out);
  EXPECT_EQ(out.str(), "t,V,h\n0,-80,1\n0.5,-79.5,0.25\n");
}
