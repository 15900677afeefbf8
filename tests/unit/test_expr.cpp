#include <gtest/gtest.h>

#include <cmath>

#include "model/ir/expr.hpp"
#include "model/ir/model.hpp"
#include "model/ir/print.hpp"

using namespace hw::model;

TEST(ExprPool, EqualNodesShareOneId) {
  ExprPool pool;
  ExprId v = pool.state(0);
  ExprId a = pool.mul(pool.constant(2.0), v);
  ExprId b = pool.mul(pool.constant(2.0), pool.state(0));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, pool.mul(v, pool.constant(2.0)));  // structural, not algebraic, equality
}

TEST(ExprPool, ConstantsCompareByBits) {
  ExprPool pool;
  EXPECT_NE(pool.constant(0.0), pool.constant(-0.0));
  EXPECT_EQ(pool.constant(std::nan("")), pool.constant(std::nan("")));
}

TEST(ExprPool, CopyKeepsInterning) {
  ExprPool pool;
  ExprId x = pool.call(Op::exp, pool.state(1)) ;
  ExprPool copy = pool;
  EXPECT_EQ(copy.call(Op::exp, copy.state(1)), x);
  EXPECT_EQ(copy.size(), pool.size());
}

TEST(ExprPool, RejectsWrongArity) {
  ExprPool pool;
  EXPECT_THROW(pool.make(Op::add, {pool.time()}), std::logic_error);
  EXPECT_THROW(pool.make(Op::piecewise, {pool.time(), pool.time()}), std::logic_error);
}

TEST(Rewrite, ReplacesLeavesEverywhere) {
  ExprPool pool;
  ExprId y = pool.state(0);
  ExprId e = pool.add(pool.mul(y, y), pool.call(Op::exp, y));
  ExprId three = pool.constant(3.0);
  auto out = rewrite(pool, std::vector<ExprId>{e}, [&](ExprId id, std::vector<ExprId>& args) {
    if (id == y) return three;
    return rebuild_with(pool, id, args);
  });
  EXPECT_EQ(out[0], pool.add(pool.mul(three, three), pool.call(Op::exp, three)));
}

TEST(Print, InfixUsesModelNames) {
  Model m;
  m.time.name = "t";
  m.states.push_back({});
  m.states[0].name = "V";
  ExprId e = m.pool.sub(m.pool.state(0), m.pool.constant(1.5));
  EXPECT_EQ(to_infix(m, e), "(V - 1.5)");
}
