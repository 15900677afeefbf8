#include <gtest/gtest.h>

#include "model/passes/sort_algebraics.hpp"
#include "test_pass_helpers.hpp"

using namespace hw::model;
using hw::model::test::Builder;

TEST(SortAlgebraics, PlacesDependenciesFirstAndRenumbersEveryUse) {
  Builder b;
  ExprId v = b.state("V", 1.0);
  ExprId a = b.alg("a");
  ExprId bb = b.alg("b");
  ExprId cc = b.alg("c");
  b.define(a, b.p.add(bb, cc));         // a reads b and c, declared before them
  b.define(bb, b.p.mul(cc, v));         // b reads c
  b.define(cc, b.p.add(v, b.c(1)));
  b.ode(v, b.p.neg(a));
  b.m.roles.stimulus_current = 2;  // "c"

  sort_algebraics(b.m);

  ASSERT_EQ(b.m.algebraics.size(), 3u);
  EXPECT_EQ(b.m.algebraics[0].name, "c");
  EXPECT_EQ(b.m.algebraics[1].name, "b");
  EXPECT_EQ(b.m.algebraics[2].name, "a");
  EXPECT_EQ(*b.m.roles.stimulus_current, 0u);
  // Every reference now points at the renumbered index.
  EXPECT_EQ(b.m.derivatives[0], b.p.neg(b.p.algebraic(2)));
  EXPECT_EQ(b.m.algebraics[2].expr, b.p.add(b.p.algebraic(1), b.p.algebraic(0)));
  EXPECT_EQ(b.m.algebraics[1].expr, b.p.mul(b.p.algebraic(0), v));
}

TEST(SortAlgebraics, OrderedModelIsUnchanged) {
  Builder b;
  ExprId v = b.state("V", 1.0);
  ExprId x = b.alg("x", b.p.mul(v, v));
  ExprId y = b.alg("y", b.p.add(x, v));
  b.ode(v, y);
  Model before = b.m;
  sort_algebraics(b.m);
  EXPECT_EQ(b.m.algebraics[0].expr, before.algebraics[0].expr);
  EXPECT_EQ(b.m.algebraics[1].expr, before.algebraics[1].expr);
}

TEST(SortAlgebraics, StateReadsDoNotConstrainOrder) {
  Builder b;
  ExprId v = b.state("V", 1.0);
  ExprId x = b.alg("x", b.p.add(v, b.c(2)));
  b.ode(v, x);  // V's derivative reads x, x reads V: not a loop
  EXPECT_NO_THROW(sort_algebraics(b.m));
}

TEST(SortAlgebraics, CycleIsALocatedErrorNamingTheLoop) {
  Builder b;
  b.state("V", 0.0);
  ExprId a = b.alg("a");
  ExprId bb = b.alg("b");
  ExprId cc = b.alg("c");
  ExprId d = b.alg("d");
  b.define(d, b.c(1));
  b.define(a, b.p.add(bb, d));
  b.define(bb, b.p.mul(cc, b.c(2)));
  b.define(cc, b.p.sub(a, b.c(1)));
  try {
    sort_algebraics(b.m);
    FAIL() << "expected an algebraic loop error";
  } catch (const hw::InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_NE(e.diagnostics()[0].message.find("algebraic loop: a -> b -> c -> a"),
              std::string::npos)
        << e.diagnostics()[0].message;
    EXPECT_EQ(e.diagnostics()[0].loc.file, "test.hwm");
    EXPECT_EQ(e.diagnostics()[0].loc.line, 100);  // a's location
  }
}

TEST(SortAlgebraics, SelfReferenceIsALoop) {
  Builder b;
  ExprId a = b.alg("a");
  b.define(a, b.p.add(a, b.c(1)));
  EXPECT_THROW(sort_algebraics(b.m), hw::InputError);
}
