#include <gtest/gtest.h>

#include <cmath>
#include <iterator>

#include "model/emit/interpreter.hpp"
#include "model/passes/pipeline.hpp"
#include "test_pass_helpers.hpp"

using namespace hw::model;
using hw::cell::Batch;
using hw::cell::Integrator;
using hw::model::test::Builder;

namespace {

// dy/dt = -k y (k a parameter, through a once-per-cell algebraic), dz/dt = 1 - z^2.
Model decay_model() {
  Builder b;
  ExprId y = b.state("y", 1.0);
  ExprId z = b.state("z", 0.0);
  ExprId k = b.param("k", 1.0);
  ExprId kk = b.alg("kk", b.p.mul(k, b.c(1.0)));
  b.ode(y, b.p.neg(b.p.mul(kk, y)));
  b.ode(z, b.p.sub(b.c(1), b.p.mul(z, z)));
  hw::DiagnosticSink sink;
  run_pipeline(b.m, {}, sink);
  return b.m;
}

}  // namespace

TEST(Interpreter, IntegratesExponentialDecayWithEveryIntegrator) {
  Model m = decay_model();
  auto kernel = make_interpreter(m);
  EXPECT_EQ(kernel->n_states(), 2);
  EXPECT_TRUE(kernel->is_gate(0));
  EXPECT_FALSE(kernel->is_gate(1));
  const double tol[] = {1e-3, 1e-6, 1e-12, 1e-3, 1e-6, 1e-3, 1e-12, 1e-12};  // fe rk2 rk4 rl1 rl2 sbe grl1 grl2
  static_assert(std::size(tol) == hw::cell::kIntegratorCount);
  for (int method = 0; method < hw::cell::kIntegratorCount; ++method) {
    double y[2] = {1.0, 0.0};
    const double p[1] = {1.0};
    Batch<double> b{1, 1, y, p, false};
    kernel->step(static_cast<Integrator>(method), 0.0, 0.001, 1000, b);
    EXPECT_NEAR(y[0], std::exp(-1.0), tol[method]) << hw::cell::integrator_name(Integrator(method));
    EXPECT_NEAR(y[1], std::tanh(1.0), 1e-3) << hw::cell::integrator_name(Integrator(method));
  }
}

TEST(Interpreter, RushLarsenIsExactOnALinearGate) {
  Model m = decay_model();
  auto kernel = make_interpreter(m);
  double y[2] = {1.0, 0.0};
  const double p[1] = {2.0};
  Batch<double> b{1, 1, y, p, false};
  kernel->step(Integrator::rl1, 0.0, 0.5, 2, b);
  EXPECT_NEAR(y[0], std::exp(-2.0), 1e-14);
}

TEST(Interpreter, FloatPathComputesInFloat) {
  Model m = decay_model();
  auto kernel = make_interpreter(m);
  float y[2] = {1.0f, 0.0f};
  const float p[1] = {1.0f};
  Batch<float> b{1, 1, y, p, false};
  kernel->step(Integrator::rk4, 0.0f, 0.01f, 100, b);
  EXPECT_NEAR(y[0], std::exp(-1.0), 1e-5);
  EXPECT_NEAR(y[1], std::tanh(1.0), 1e-5);
}

TEST(Interpreter, PerCellParametersInABatch) {
  Model m = decay_model();
  auto kernel = make_interpreter(m);
  // Three cells, SoA with stride 3: y[state*3 + cell], p[param*3 + cell].
  double y[6] = {1, 1, 1, 0, 0, 0};
  const double p[3] = {0.5, 1.0, 2.0};
  Batch<double> b{3, 3, y, p, true};
  kernel->step(Integrator::rl2, 0.0, 0.01, 100, b);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(y[c], std::exp(-p[c]), 1e-10) << "cell " << c;
}

TEST(Interpreter, ConstantsRhsJacAndAlgebraicsAgreeWithTheModel) {
  Model m = decay_model();
  auto kernel = make_interpreter(m);
  const double p[1] = {3.0};
  std::vector<double> c(kernel->n_constants());
  kernel->constants(p, c.data());
  ASSERT_EQ(kernel->n_constants(), 1);
  EXPECT_EQ(c[0], 3.0);
  const double y[2] = {0.5, 0.25};
  double f[2], j[2];
  kernel->rhs_jac(0.0, y, p, c.data(), f, j);
  EXPECT_DOUBLE_EQ(f[0], -1.5);
  EXPECT_DOUBLE_EQ(f[1], 1 - 0.0625);
  EXPECT_DOUBLE_EQ(j[0], -3.0);
  EXPECT_DOUBLE_EQ(j[1], -0.5);
  std::vector<double> alg(kernel->n_algebraics());
  kernel->algebraics(0.0, y, p, c.data(), alg.data());
  for (std::size_t i = 0; i < alg.size(); ++i)
    EXPECT_DOUBLE_EQ(alg[i], evaluate(m, m.pool.algebraic(i), 0.0, y, p)) << m.algebraics[i].name;
}

TEST(Interpreter, RejectsAModelThatWasNotAnalysed) {
  Builder b;
  ExprId y = b.state("y", 1.0);
  b.ode(y, b.p.neg(y));
  EXPECT_THROW(make_interpreter(b.m), hw::Error);
}

TEST(Interpreter, PiecewiseAndSelectsEvaluateLikeThePasses) {
  Builder b;
  ExprId v = b.state("V", 0.0);
  ExprId t = b.p.time();
  ExprId stim = b.alg("stim", b.p.make(Op::piecewise,
                                       {b.p.make(Op::logical_and, {b.p.make(Op::ge, {t, b.c(1)}),
                                                                   b.p.make(Op::lt, {t, b.c(2)})}),
                                        b.c(-10), b.c(0)}));
  b.ode(v, b.p.sub(b.p.neg(v), stim));
  Model original = b.m;
  hw::DiagnosticSink sink;
  run_pipeline(b.m, {}, sink);
  auto kernel = make_interpreter(b.m);
  for (double time : {0.0, 1.0, 1.5, 2.0}) {
    double y[1] = {0.3}, f[1], j[1];
    kernel->rhs_jac(time, y, nullptr, nullptr, f, j);
    EXPECT_EQ(f[0], evaluate(original, original.derivatives[0], time, y, nullptr));
    EXPECT_EQ(j[0], -1.0);
  }
}
