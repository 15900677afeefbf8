#include <gtest/gtest.h>

#include "model/emit/interpreter.hpp"
#include "model/passes/lower_piecewise.hpp"
#include "test_pass_helpers.hpp"

using namespace hw::model;
using hw::model::test::Builder;

namespace {

bool has_piecewise(const Model& m) {
  std::vector<ExprId> roots;
  for (const auto& a : m.algebraics) roots.push_back(a.expr);
  for (ExprId d : m.derivatives) roots.push_back(d);
  for (ExprId id : topological_nodes(m.pool, roots))
    if (m.pool.op(id) == Op::piecewise) return true;
  return false;
}

}  // namespace

TEST(LowerPiecewise, NestedSelectWithTheSameValues) {
  Builder b;
  ExprId v = b.state("V", 0.0);
  // Overlapping conditions: the first true one must still win.
  ExprId pw = b.p.make(Op::piecewise,
                       {b.p.make(Op::lt, {v, b.c(0)}), b.c(-1),
                        b.p.make(Op::lt, {v, b.c(10)}), b.p.mul(v, b.c(2)),
                        b.p.make(Op::lt, {v, b.c(5)}), b.c(99),  // never reached
                        b.p.call(Op::sqrt, v)});
  b.alg("x", pw);
  b.ode(v, b.p.add(pw, b.c(1)));
  Model original = b.m;

  lower_piecewise(b.m);

  EXPECT_FALSE(has_piecewise(b.m));
  for (double y : {-3.0, 0.0, 2.0, 4.9, 5.0, 9.99, 10.0, 50.0}) {
    EXPECT_EQ(evaluate(b.m, b.m.algebraics[0].expr, 0, &y, nullptr),
              evaluate(original, original.algebraics[0].expr, 0, &y, nullptr))
        << "V = " << y;
    EXPECT_EQ(evaluate(b.m, b.m.derivatives[0], 0, &y, nullptr),
              evaluate(original, original.derivatives[0], 0, &y, nullptr));
  }
  EXPECT_EQ(b.m.pool.op(b.m.algebraics[0].expr), Op::select);
}
