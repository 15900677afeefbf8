#include <gtest/gtest.h>

#include <cmath>

#include "model/emit/interpreter.hpp"
#include "model/passes/cse.hpp"
#include "test_pass_helpers.hpp"

using namespace hw::model;
using hw::model::test::Builder;

TEST(Cse, SharedSubexpressionBecomesOneTemporaryBeforeItsFirstUser) {
  Builder b;
  ExprId v = b.state("V", -80.0);
  ExprId g = b.param("g", 0.5);
  ExprId shared = b.p.call(Op::exp, b.p.mul(b.c(0.04), b.p.add(v, b.c(77))));
  b.alg("k", b.p.mul(g, v));  // unrelated, stays first
  b.alg("a", b.p.div(b.c(1), b.p.add(b.c(1), shared)));
  b.alg("bb", b.p.mul(shared, g));
  b.ode(v, b.p.sub(b.p.algebraic(1), b.p.algebraic(2)));
  Model original = b.m;

  eliminate_common_subexpressions(b.m);

  ASSERT_EQ(b.m.algebraics.size(), 4u);
  EXPECT_EQ(b.m.algebraics[0].name, "k");
  EXPECT_EQ(b.m.algebraics[1].name, "_cse_0");
  EXPECT_TRUE(b.m.algebraics[1].synthetic);
  EXPECT_EQ(b.m.algebraics[1].expr, shared);
  EXPECT_EQ(b.m.algebraics[2].name, "a");
  EXPECT_TRUE(occurs(b.p, b.m.algebraics[2].expr, b.p.algebraic(1)));
  EXPECT_TRUE(occurs(b.p, b.m.algebraics[3].expr, b.p.algebraic(1)));
  EXPECT_FALSE(occurs(b.p, b.m.algebraics[3].expr, shared));

  const double p = 0.5;
  for (double y : {-100.0, -77.0, 0.0, 30.0}) {
    EXPECT_DOUBLE_EQ(evaluate(b.m, b.m.derivatives[0], 0, &y, &p),
                     evaluate(original, original.derivatives[0], 0, &y, &p));
  }
}

TEST(Cse, WholeDefinitionIsSharedThroughItsAlgebraic) {
  Builder b;
  ExprId v = b.state("V", 1.0);
  ExprId e = b.p.call(Op::exp, v);
  b.alg("ev", e);
  b.ode(v, b.p.add(e, b.c(1)));  // uses the same node as ev's definition
  eliminate_common_subexpressions(b.m);
  ASSERT_EQ(b.m.algebraics.size(), 1u);
  EXPECT_EQ(b.m.algebraics[0].expr, e);
  EXPECT_EQ(b.m.derivatives[0], b.p.add(b.p.algebraic(0), b.c(1)));
}

TEST(Cse, LeavesAndCheapNodesAreNotShared) {
  Builder b;
  ExprId v = b.state("V", 1.0);
  ExprId w = b.state("w", 1.0);
  b.ode(v, b.p.mul(b.p.neg(v), w));
  b.ode(w, b.p.add(b.p.neg(v), b.p.make(Op::lt, {v, w})));
  b.alg("x", b.p.make(Op::lt, {v, w}));
  eliminate_common_subexpressions(b.m);
  EXPECT_EQ(b.m.algebraics.size(), 1u);
}

TEST(Cse, SquareOfASubexpressionIsShared) {
  Builder b;
  ExprId v = b.state("V", 1.0);
  ExprId s = b.p.add(v, b.c(3));
  b.ode(v, b.p.mul(s, s));
  eliminate_common_subexpressions(b.m);
  ASSERT_EQ(b.m.algebraics.size(), 1u);
  EXPECT_EQ(b.m.derivatives[0], b.p.mul(b.p.algebraic(0), b.p.algebraic(0)));
}
