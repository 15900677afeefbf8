#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model/emit/interpreter.hpp"
#include "model/passes/derivative.hpp"
#include "test_pass_helpers.hpp"

using namespace hw::model;
using hw::model::test::Builder;

namespace {

// Checks d e/d x against a central difference at random points in [lo, hi].
void check_against_fd(Builder& b, ExprId e, double lo, double hi, const char* what) {
  ExprId d = differentiate(b.m, e, VarKind::state, 0);
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> u(lo, hi);
  for (int k = 0; k < 20; ++k) {
    double y[2] = {u(rng), 0.7};
    const double h = 1e-6 * std::max(1.0, std::fabs(y[0]));
    double yp[2] = {y[0] + h, y[1]}, ym[2] = {y[0] - h, y[1]};
    const double fd = (evaluate(b.m, e, 0, yp, nullptr) - evaluate(b.m, e, 0, ym, nullptr)) / (2 * h);
    const double exact = evaluate(b.m, d, 0, y, nullptr);
    EXPECT_NEAR(exact, fd, 1e-6 * std::max(1.0, std::fabs(fd))) << what << " at x = " << y[0];
  }
}

}  // namespace

TEST(Differentiate, MatchesFiniteDifferencesForEveryOperation) {
  Builder b;
  ExprId x = b.state("x", 0.0);
  ExprId w = b.state("w", 0.7);
  auto& p = b.p;
  auto c = [&](double v) { return b.c(v); };
  struct Case { const char* name; ExprId e; double lo, hi; };
  const Case cases[] = {
      {"add/sub/mul", p.sub(p.mul(p.add(x, c(2)), x), p.mul(w, x)), -3, 3},
      {"div", p.div(p.add(x, c(1)), p.add(p.mul(x, x), c(2))), -3, 3},
      {"neg", p.neg(p.mul(x, x)), -3, 3},
      {"pow const", p.pow(x, c(3)), -3, 3},
      {"pow var", p.pow(x, p.mul(x, c(0.5))), 0.5, 3},
      {"exp/log", p.call(Op::log, p.add(p.call(Op::exp, x), c(1))), -3, 3},
      {"log10", p.call(Op::log10, x), 0.1, 5},
      {"sqrt", p.call(Op::sqrt, x), 0.1, 5},
      {"abs", p.call(Op::abs, p.sub(x, c(0.3))), -3, 3},
      {"sin/cos/tan", p.add(p.call(Op::sin, x), p.mul(p.call(Op::cos, x), p.call(Op::tan, p.mul(x, c(0.3))))), -3, 3},
      {"asin/acos/atan", p.add(p.call(Op::asin, x), p.add(p.call(Op::acos, x), p.call(Op::atan, x))), -0.9, 0.9},
      {"hyperbolic", p.add(p.call(Op::sinh, x), p.add(p.call(Op::cosh, x), p.call(Op::tanh, x))), -2, 2},
      {"inverse hyperbolic", p.add(p.call(Op::asinh, x), p.call(Op::atanh, p.mul(x, c(0.3)))), -2, 2},
      {"acosh", p.call(Op::acosh, x), 1.1, 4},
      {"min/max", p.add(p.make(Op::min, {x, p.mul(x, x)}), p.make(Op::max, {x, c(0.5)})), -3, 3},
      {"rem", p.make(Op::rem, {p.mul(x, x), c(1.3)}), 0.2, 3},
      {"floor", p.add(p.call(Op::floor, x), x), 0.1, 0.9},
      {"select", p.select(p.make(Op::lt, {x, c(0)}), p.mul(x, x), p.call(Op::exp, x)), -3, 3},
      {"piecewise", p.make(Op::piecewise, {p.make(Op::lt, {x, c(0)}), p.mul(x, c(3)),
                                           p.make(Op::lt, {x, c(1)}), p.mul(x, x),
                                           p.call(Op::sin, x)}), -3, 3},
  };
  for (const Case& k : cases) check_against_fd(b, k.e, k.lo, k.hi, k.name);
}

TEST(Differentiate, FollowsAlgebraicsByTheChainRule) {
  Builder b;
  ExprId x = b.state("x", 0.0);
  b.state("w", 0.7);
  ExprId a = b.alg("a", b.p.call(Op::exp, b.p.mul(x, b.c(0.5))));
  ExprId bb = b.alg("b", b.p.mul(a, a));
  ExprId e = b.p.div(bb, b.p.add(a, b.c(1)));
  check_against_fd(b, e, -2, 2, "through algebraics");
}

TEST(Differentiate, IndependentExpressionGivesExactZero) {
  Builder b;
  ExprId x = b.state("x", 0.0);
  ExprId w = b.state("w", 0.7);
  (void)x;
  ExprId d = differentiate(b.m, b.p.call(Op::exp, b.p.mul(w, w)), VarKind::state, 0);
  EXPECT_TRUE(b.p.is_constant(d, 0.0));
}
