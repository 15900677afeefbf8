#include <gtest/gtest.h>

#include <cmath>

#include "model/passes/fold_constants.hpp"
#include "test_pass_helpers.hpp"

using namespace hw::model;
using hw::model::test::Builder;

TEST(FoldConstants, EvaluatesConstantSubtreesButNeverParameters) {
  Builder b;
  ExprId v = b.state("V", 0.0);
  ExprId g = b.param("g", 2.0);
  ExprId e = b.p.mul(b.p.add(b.c(1), b.c(2)), b.p.call(Op::exp, b.c(0)));  // 3
  ExprId x = b.alg("x", b.p.mul(e, b.p.mul(g, v)));
  (void)x;
  fold_constants(b.m);
  EXPECT_EQ(b.m.algebraics[0].expr, b.p.mul(b.c(3), b.p.mul(g, v)));
}

TEST(FoldConstants, IdentitiesThatKeepValues) {
  ExprPool p;
  ExprId x = p.state(0);
  EXPECT_EQ(fold_expr(p, p.add(x, p.constant(0))), x);
  EXPECT_EQ(fold_expr(p, p.mul(p.constant(1), x)), x);
  EXPECT_EQ(fold_expr(p, p.div(x, p.constant(1))), x);
  EXPECT_EQ(fold_expr(p, p.neg(p.neg(x))), x);
  EXPECT_EQ(fold_expr(p, p.pow(x, p.constant(1))), x);
  EXPECT_EQ(fold_expr(p, p.pow(x, p.constant(0))), p.constant(1));
  EXPECT_EQ(fold_expr(p, p.add(x, p.neg(p.state(1)))), p.sub(x, p.state(1)));
  // x*0 is kept: x may be inf or NaN at run time.
  EXPECT_EQ(fold_expr(p, p.mul(x, p.constant(0))), p.mul(x, p.constant(0)));
  // Integer powers stay pow (printers strength-reduce them).
  EXPECT_EQ(fold_expr(p, p.pow(x, p.constant(3))), p.pow(x, p.constant(3)));
}

TEST(FoldConstants, SelectAndPiecewiseWithConstantConditions) {
  ExprPool p;
  ExprId x = p.state(0), y = p.state(1);
  ExprId t = p.make(Op::lt, {p.constant(1), p.constant(2)});  // true
  ExprId f = p.make(Op::gt, {p.constant(1), p.constant(2)});  // false
  EXPECT_EQ(fold_expr(p, p.select(t, x, y)), x);
  EXPECT_EQ(fold_expr(p, p.select(f, x, y)), y);
  ExprId c = p.make(Op::lt, {x, y});
  EXPECT_EQ(fold_expr(p, p.select(c, x, x)), x);
  // piecewise(false, x, c, y, otherwise 2) → piecewise(c, y, 2)
  EXPECT_EQ(fold_expr(p, p.make(Op::piecewise, {f, x, c, y, p.constant(2)})),
            p.make(Op::piecewise, {c, y, p.constant(2)}));
  // piecewise(c, y, true, x, otherwise 2) → piecewise(c, y, x)
  EXPECT_EQ(fold_expr(p, p.make(Op::piecewise, {c, y, t, x, p.constant(2)})),
            p.make(Op::piecewise, {c, y, x}));
  EXPECT_EQ(fold_expr(p, p.make(Op::piecewise, {t, x, p.constant(2)})), x);
  EXPECT_EQ(fold_expr(p, p.make(Op::piecewise, {f, x, p.constant(2)})), p.constant(2));
}

TEST(FoldConstants, ConstantAlgebraicsAreSubstitutedIntoUsers) {
  Builder b;
  ExprId v = b.state("V", 0.0);
  ExprId k = b.alg("k", b.p.div(b.c(1), b.c(4)));
  ExprId u = b.alg("u", b.p.mul(k, v));
  b.ode(v, b.p.neg(u));
  fold_constants(b.m);
  EXPECT_EQ(b.m.algebraics[0].expr, b.c(0.25));  // k keeps its name and value
  EXPECT_EQ(b.m.algebraics[1].expr, b.p.mul(b.c(0.25), v));
}

TEST(FoldConstants, NonFiniteConstantsFoldToTheirIeeeValue) {
  ExprPool p;
  ExprId e = fold_expr(p, p.div(p.constant(0), p.constant(0)));
  ASSERT_TRUE(p.is_constant(e));
  EXPECT_TRUE(std::isnan(p.node(e).value));
}
