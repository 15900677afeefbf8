// CVODE: an analytic problem, and agreement with a fixed-step integrator on a cell model.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "cell/cvode.hpp"
#include "cell_test_models.hpp"

using namespace hw::cell;

TEST(Cvode, ExponentialDecay) {
  const ConceptKernel<cell_models::Decay> k(cell_models::Decay{});
  std::vector<double> y{1.0};
  const long steps = cvode_integrate(k, y, {2.0}, 0.0, 1.5, 1e-10, 1e-12);
  EXPECT_NEAR(y[0], std::exp(-3.0), 1e-8);
  EXPECT_GT(steps, 10);
}

TEST(Cvode, RejectsBadTolerances) {
  const ConceptKernel<cell_models::Decay> k(cell_models::Decay{});
  std::vector<double> y{1.0};
  EXPECT_THROW(cvode_integrate(k, y, {1.0}, 0.0, 1.0, -1.0, 1e-8), hw::InputError);
}

TEST(Cvode, AgreesWithRushLarsenOnMitchellSchaeffer) {
  const ConceptKernel<cell_models::MitchellSchaeffer> k(cell_models::MitchellSchaeffer{});
  const auto setup = cell_models::ms_setup();
  const auto train = StimulusTrain::periodic(500, 2, 1.0);
  TraceOptions trace;
  trace.interval_ms = 1.0;
  SolverOptions rl2;
  rl2.dt_ms = 0.005;
  SolverOptions cv = rl2;
  cv.cvode = true;
  cv.rtol = 1e-8;
  cv.atol = 1e-10;
  const auto a = run_single_cell(k, setup, train, rl2, trace);
  const auto b = run_single_cell(k, setup, train, cv, trace);
  ASSERT_EQ(a.beats.size(), 2u);
  ASSERT_EQ(b.beats.size(), 2u);
  ASSERT_EQ(a.trace.rows(), b.trace.rows());
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(a.beats[i].apd90, b.beats[i].apd90, 1.0);
  double num = 0, den = 0;
  for (std::size_t r = 0; r < a.trace.rows(); ++r) {
    const double d = a.trace.at(r, 1) - b.trace.at(r, 1);
    num += d * d;
    den += b.trace.at(r, 1) * b.trace.at(r, 1);
  }
  EXPECT_LT(std::sqrt(num / den), 0.01);
}

#include "model/emit/interpreter.hpp"
#include "model/load.hpp"

TEST(Cvode, AgreesWithRl2OnTenTusscher2006) {
  const std::string file =
      std::string(HW_SHARED_DIR) + "/models/cellml/tentusscher_panfilov_2006_epi.cellml";
  if (!std::ifstream(file)) GTEST_SKIP() << "no shared models at " << file;
  const auto lm = hw::model::load_model(file);
  const auto k = hw::model::make_interpreter(lm.analysed);
  const auto setup = make_cell_setup(lm.analysed, lm.stimulus);
  ASSERT_EQ(lm.stimulus.kind, hw::model::StimulusInfo::Kind::rewritten);
  const auto train = StimulusTrain::periodic(1000, 1, *lm.stimulus.default_duration_ms);
  SolverOptions rl2;
  SolverOptions cv = rl2;
  cv.cvode = true;
  TraceOptions trace;
  const auto a = run_single_cell(*k, setup, train, rl2, trace);
  const auto b = run_single_cell(*k, setup, train, cv, trace);
  ASSERT_EQ(a.beats.size(), 1u);
  EXPECT_NEAR(a.beats[0].apd90, b.beats[0].apd90, 1.0);
  EXPECT_GT(b.beats[0].apd90, 250.0);  // ten Tusscher epi: about 300 ms
  EXPECT_LT(b.beats[0].apd90, 350.0);
  double num = 0, den = 0;
  for (std::size_t r = 0; r < a.trace.rows(); ++r) {
    const double d = a.trace.at(r, 1) - b.trace.at(r, 1);
    num += d * d;
    den += b.trace.at(r, 1) * b.trace.at(r, 1);
  }
  EXPECT_LT(std::sqrt(num / den), 0.01);
}
