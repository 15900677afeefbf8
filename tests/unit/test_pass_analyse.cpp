#include <gtest/gtest.h>

#include "model/emit/interpreter.hpp"
#include "model/passes/analyse_states.hpp"
#include "model/passes/classify.hpp"
#include "test_pass_helpers.hpp"

using namespace hw::model;
using hw::model::test::Builder;

namespace {

// Hodgkin-Huxley-style: dV/dt = -g m^3 (V - E) ; dm/dt = alpha(V)(1-m) - beta(V) m.
Builder hh_like() {
  Builder b;
  ExprId v = b.state("V", -80.0);
  ExprId m = b.state("m", 0.05);
  ExprId g = b.param("g", 2.0);
  auto& p = b.p;
  ExprId alpha = b.alg("alpha", p.div(b.c(1), p.add(b.c(1), p.call(Op::exp, p.neg(p.div(p.add(v, b.c(40)), b.c(5)))))));
  ExprId beta = b.alg("beta", p.mul(b.c(0.1), p.call(Op::exp, p.div(v, b.c(-20)))));
  ExprId i = b.alg("i", p.mul(p.mul(g, p.pow(m, b.c(3))), p.sub(v, b.c(50))));
  b.ode(v, p.neg(i));
  b.ode(m, p.sub(p.mul(alpha, p.sub(b.c(1), m)), p.mul(beta, m)));
  return b;
}

}  // namespace

TEST(AnalyseStates, DetectsTheGateButNotTheVoltage) {
  Builder b = hh_like();
  b.m.roles.voltage_state = 0;
  analyse_states(b.m);
  ASSERT_EQ(b.m.analysis.size(), 2u);
  EXPECT_FALSE(b.m.analysis[0].is_gate);
  EXPECT_TRUE(b.m.analysis[1].is_gate);
}

TEST(AnalyseStates, NonlinearStateIsNotAGateWhateverItsRole) {
  Builder b = hh_like();
  // An inward-rectifier-like term makes dV/dt nonlinear in V.
  ExprId v = b.p.state(0);
  b.m.derivatives[0] = b.p.sub(b.m.derivatives[0], b.p.call(Op::exp, b.p.div(v, b.c(20))));
  analyse_states(b.m);
  EXPECT_FALSE(b.m.analysis[0].is_gate);
  EXPECT_TRUE(b.m.analysis[1].is_gate);
}

TEST(AnalyseStates, LinearVoltageIsAGateOnlyWithoutTheVoltageRole) {
  Builder b = hh_like();
  analyse_states(b.m);
  EXPECT_TRUE(b.m.analysis[0].is_gate);  // -g m^3 (V - E) is linear in V
}

TEST(AnalyseStates, JacobianDiagonalIsExact) {
  Builder b = hh_like();
  analyse_states(b.m);
  const double y[2] = {-20.0, 0.3}, p[1] = {2.0};
  // d(dV/dt)/dV = -g m^3 ; d(dm/dt)/dm = -(alpha + beta)
  EXPECT_NEAR(evaluate(b.m, b.m.analysis[0].jacobian_diag, 0, y, p), -2.0 * 0.027, 1e-15);
  const double alpha = evaluate(b.m, b.p.algebraic(0), 0, y, p);
  const double beta = evaluate(b.m, b.p.algebraic(1), 0, y, p);
  EXPECT_NEAR(evaluate(b.m, b.m.analysis[1].jacobian_diag, 0, y, p), -(alpha + beta), 1e-15);
}

TEST(AnalyseStates, DependsOnLooksThroughAlgebraics) {
  Builder b = hh_like();
  EXPECT_TRUE(depends_on(b.m, b.m.derivatives[0], VarKind::state, 1));  // via i
  EXPECT_FALSE(depends_on(b.m, b.p.algebraic(0), VarKind::state, 1));
  EXPECT_TRUE(depends_on(b.m, b.p.algebraic(2), VarKind::param, 0));
}

TEST(AnalyseStates, StateThatIgnoresItselfIsNotAGate) {
  Builder b;
  ExprId x = b.state("x", 0.0);
  ExprId t = b.state("t2", 0.0);
  b.ode(x, b.c(1));
  b.ode(t, b.p.mul(x, x));
  analyse_states(b.m);
  EXPECT_FALSE(b.m.analysis[0].is_gate);
  EXPECT_FALSE(b.m.analysis[1].is_gate);
  EXPECT_TRUE(b.p.is_constant(b.m.analysis[0].jacobian_diag, 0.0));
}

TEST(ClassifyAlgebraics, OncePerCellExactlyForParameterOnlyAlgebraics) {
  Builder b;
  ExprId v = b.state("V", 0.0);
  ExprId g = b.param("g", 2.0);
  ExprId rtf = b.alg("RTF", b.p.mul(g, b.c(26.7)));
  ExprId e = b.alg("E", b.p.mul(rtf, b.p.call(Op::log, g)));
  ExprId i = b.alg("i", b.p.mul(e, v));
  ExprId s = b.alg("stim", b.p.make(Op::lt, {b.p.time(), b.c(1)}));
  ExprId k = b.alg("k", b.c(3));
  b.ode(v, b.p.add(i, b.p.add(s, k)));
  classify_algebraics(b.m);
  EXPECT_TRUE(b.m.algebraics[0].once_per_cell);
  EXPECT_TRUE(b.m.algebraics[1].once_per_cell);
  EXPECT_FALSE(b.m.algebraics[2].once_per_cell);
  EXPECT_FALSE(b.m.algebraics[3].once_per_cell);  // reads time
  EXPECT_TRUE(b.m.algebraics[4].once_per_cell);
}
