#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "model/analysis/roles.hpp"
#include "model/emit/interpreter.hpp"
#include "model/frontend/cellml/cellml.hpp"
#include "model/passes/fold_constants.hpp"
#include "model/passes/singularities.hpp"
#include "model/passes/sort_algebraics.hpp"
#include "test_pass_helpers.hpp"

using namespace hw::model;
using hw::model::test::Builder;

namespace {

double at(const Model& m, ExprId e, double v, std::vector<double> y = {}, std::vector<double> p = {}) {
  if (y.empty()) y.assign(m.states.size(), 0.0);
  for (std::size_t i = 0; i < m.states.size() && y.size() == m.states.size(); ++i)
    if (i == 0) y[0] = v;
  if (p.empty()) for (const auto& q : m.parameters) p.push_back(q.value);
  return evaluate(m, e, 0, y.data(), p.data());
}

// Values around v0 are finite, close to `limit` at v0 and continuous across the window's
// edges (the repair matches the formula there).
void expect_repaired(const Model& m, ExprId e, double v0, double limit, double w) {
  EXPECT_TRUE(std::isfinite(at(m, e, v0)));
  EXPECT_NEAR(at(m, e, v0), limit, 1e-6 * std::max(1.0, std::fabs(limit)));
  for (double s : {-1.0, 1.0}) {
    const double inside = at(m, e, v0 + s * w * (1 - 1e-9));
    const double outside = at(m, e, v0 + s * w * (1 + 1e-9));
    EXPECT_NEAR(inside, outside, 1e-7 * std::max(1.0, std::fabs(limit)));
  }
  for (double dv : {1e-12, 1e-9, 1e-6, 1e-5}) {
    EXPECT_NEAR(at(m, e, v0 + dv), limit, 1e-4 * std::max(1.0, std::fabs(limit)));
    EXPECT_NEAR(at(m, e, v0 - dv), limit, 1e-4 * std::max(1.0, std::fabs(limit)));
  }
}

}  // namespace

TEST(RepairSingularities, XOverExpXMinusOneIsOneAtZero) {
  Builder b;
  ExprId x = b.state("x", 0.5);
  b.alg("r", b.p.div(x, b.p.sub(b.p.call(Op::exp, x), b.c(1))));
  b.ode(x, b.p.neg(b.p.algebraic(0)));
  hw::DiagnosticSink sink;

  repair_singularities(b.m, sink);

  ASSERT_EQ(b.m.repairs.size(), 1u);
  EXPECT_EQ(b.m.repairs[0].where, "r");
  EXPECT_EQ(b.m.repairs[0].variable, "x");
  EXPECT_NEAR(b.m.repairs[0].point, 0.0, 1e-12);
  ASSERT_EQ(sink.all().size(), 1u);
  EXPECT_EQ(sink.all()[0].severity, hw::Severity::note);
  expect_repaired(b.m, b.m.algebraics[0].expr, 0.0, 1.0, b.m.repairs[0].half_width);
  // Far from the point the formula is untouched.
  EXPECT_DOUBLE_EQ(at(b.m, b.m.algebraics[0].expr, 2.0), 2.0 / std::expm1(2.0));
}

TEST(RepairSingularities, LuoRudyAlphaMAtMinus47_13) {
  Builder b;
  ExprId v = b.state("V", -84.0);
  auto& p = b.p;
  ExprId s = p.add(v, b.c(47.13));
  b.alg("alpha_m", p.div(p.mul(b.c(0.32), s),
                         p.sub(b.c(1), p.call(Op::exp, p.mul(p.neg(b.c(0.1)), s)))));
  b.ode(v, p.algebraic(0));
  b.m.roles.voltage_state = 0;
  fold_constants(b.m);
  hw::DiagnosticSink sink;

  repair_singularities(b.m, sink);

  ASSERT_EQ(b.m.repairs.size(), 1u);
  EXPECT_NEAR(b.m.repairs[0].point, -47.13, 1e-9);
  expect_repaired(b.m, b.m.algebraics[0].expr, -47.13, 3.2, b.m.repairs[0].half_width);
}

TEST(RepairSingularities, GhkFluxFollowsTheOtherStates) {
  // z V F^2/(RT) (ci e^{zVF/RT} - co)/(e^{zVF/RT} - 1) with z = 2 → F (ci - co) at V = 0.
  Builder b;
  ExprId v = b.state("V", -85.0);
  ExprId ci = b.state("ci", 1e-4);
  ExprId co = b.param("co", 2.0);
  ExprId F = b.param("F", 96485.0);
  ExprId RT = b.param("RT", 8314.0 * 310.0);
  auto& p = b.p;
  ExprId u = b.alg("vfrt", p.div(p.mul(p.mul(b.c(2), v), F), RT));
  ExprId e = p.call(Op::exp, u);
  b.alg("phi", p.div(p.mul(p.mul(b.c(2), p.mul(v, p.div(p.mul(F, F), RT))),
                           p.sub(p.mul(ci, e), co)),
                     p.sub(e, b.c(1))));
  b.ode(v, p.algebraic(1));
  b.ode(ci, b.c(0));
  b.m.roles.voltage_state = 0;
  hw::DiagnosticSink sink;

  repair_singularities(b.m, sink);

  ASSERT_EQ(b.m.repairs.size(), 1u);
  EXPECT_EQ(b.m.repairs[0].where, "phi");
  const ExprId phi = b.m.algebraics[1].expr;
  for (double c_i : {1e-4, 0.5, 3.0}) {
    const std::vector<double> y = {0.0, c_i};
    const double limit = 96485.0 * (c_i - 2.0);
    EXPECT_NEAR(at(b.m, phi, 0.0, y), limit, 1e-6 * std::fabs(limit)) << "ci = " << c_i;
    EXPECT_NEAR(at(b.m, phi, 1e-9, y), limit, 1e-5 * std::fabs(limit));
  }
}

TEST(RepairSingularities, RealPoleIsWarnedNotRepaired) {
  Builder b;
  ExprId v = b.state("V", 0.0);
  b.alg("bad", b.p.div(b.c(1), b.p.sub(v, b.c(10))));
  b.ode(v, b.p.algebraic(0));
  hw::DiagnosticSink sink;
  ExprId before = b.m.algebraics[0].expr;

  repair_singularities(b.m, sink);

  EXPECT_TRUE(b.m.repairs.empty());
  EXPECT_EQ(b.m.algebraics[0].expr, before);
  ASSERT_EQ(sink.all().size(), 1u);
  EXPECT_EQ(sink.all()[0].severity, hw::Severity::warning);
}

TEST(RepairSingularities, ExplicitHalfWidthIsUsed) {
  Builder b;
  ExprId x = b.state("x", 0.5);
  b.alg("r", b.p.div(x, b.p.sub(b.p.call(Op::exp, x), b.c(1))));
  b.ode(x, b.p.algebraic(0));
  hw::DiagnosticSink sink;
  repair_singularities(b.m, sink, 0.01);
  ASSERT_EQ(b.m.repairs.size(), 1u);
  EXPECT_EQ(b.m.repairs[0].half_width, 0.01);
  expect_repaired(b.m, b.m.algebraics[0].expr, 0.0, 1.0 + 0.01 * 0.01 / 12, 0.01);
}

// The shared CellML models: every repair named in SOURCES.md is found.
namespace {

std::string shared_model(const char* file) {
  const std::string path = std::string(HW_SHARED_DIR) + "/models/cellml/" + file;
  return std::filesystem::exists(path) ? path : std::string();
}

bool repaired_near(const Model& m, const std::string& where_part, double point) {
  for (const auto& r : m.repairs)
    if (r.where.find(where_part) != std::string::npos && std::fabs(r.point - point) < 1e-6)
      return true;
  return false;
}

Model load_and_repair(const std::string& path) {
  Model m = load_cellml(path);
  detect_roles(m);
  sort_algebraics(m);
  fold_constants(m);
  hw::DiagnosticSink sink;
  repair_singularities(m, sink);
  return m;
}

}  // namespace

TEST(RepairSingularitiesSharedModels, LuoRudy1991) {
  const std::string path = shared_model("luo_rudy_1991.cellml");
  if (path.empty()) GTEST_SKIP() << "shared models not found under " << HW_SHARED_DIR;
  Model m = load_and_repair(path);
  EXPECT_TRUE(repaired_near(m, "alpha_m", -47.13));
  EXPECT_TRUE(repaired_near(m, "Xi", -77.0));
  // alpha_m is finite and close to its limit 3.2 at the point.
  auto am = m.find_algebraic("alpha_m");
  ASSERT_TRUE(am);
  std::vector<double> y, p;
  for (const auto& s : m.states) y.push_back(s.initial);
  for (const auto& q : m.parameters) p.push_back(q.value);
  ASSERT_TRUE(m.roles.voltage_state);
  y[*m.roles.voltage_state] = -47.13;
  EXPECT_NEAR(evaluate(m, m.pool.algebraic(*am), 0, y.data(), p.data()), 3.2, 1e-5);
}

TEST(RepairSingularitiesSharedModels, OharaRudyGhkAtZero) {
  const std::string path = shared_model("ohara_rudy_2011_endo.cellml");
  if (path.empty()) GTEST_SKIP() << "shared models not found under " << HW_SHARED_DIR;
  Model m = load_and_repair(path);
  int at_zero = 0;
  for (const auto& r : m.repairs) at_zero += std::fabs(r.point) < 1e-9;
  EXPECT_GE(at_zero, 5) << "PhiCaL, PhiCaNa, PhiCaK, INab, ICab";
  // Every algebraic and derivative is finite at V = 0 exactly.
  std::vector<double> y, p;
  for (const auto& s : m.states) y.push_back(s.initial);
  for (const auto& q : m.parameters) p.push_back(q.value);
  y[*m.roles.voltage_state] = 0.0;
  for (std::size_t i = 0; i < m.derivatives.size(); ++i)
    EXPECT_TRUE(std::isfinite(evaluate(m, m.derivatives[i], 0, y.data(), p.data())))
        << m.states[i].name;
}

TEST(RepairSingularitiesSharedModels, TenTusscherICaLAt15) {
  const std::string path = shared_model("tentusscher_panfilov_2006_epi.cellml");
  if (path.empty()) GTEST_SKIP() << "shared models not found under " << HW_SHARED_DIR;
  Model m = load_and_repair(path);
  bool found = false;
  for (const auto& r : m.repairs) found = found || std::fabs(r.point - 15.0) < 1e-6;
  EXPECT_TRUE(found);
  std::vector<double> y, p;
  for (const auto& s : m.states) y.push_back(s.initial);
  for (const auto& q : m.parameters) p.push_back(q.value);
  const std::uint32_t vi = *m.roles.voltage_state;
  // Continuous through 15 mV: values at 15 ± small steps lie on a smooth curve.
  std::vector<double> vals;
  for (double dv : {-1e-3, -1e-6, 0.0, 1e-6, 1e-3}) {
    y[vi] = 15.0 + dv;
    double d = evaluate(m, m.derivatives[vi], 0, y.data(), p.data());
    EXPECT_TRUE(std::isfinite(d));
    vals.push_back(d);
  }
  EXPECT_NEAR(vals[2], 0.5 * (vals[0] + vals[4]), 1e-6 * std::fabs(vals[2]) + 1e-9);
}

TEST(RepairSingularitiesSharedModels, BeelerReuterIK1At23) {
  const std::string path = shared_model("beeler_reuter_1977.cellml");
  if (path.empty()) GTEST_SKIP() << "shared models not found under " << HW_SHARED_DIR;
  Model m = load_and_repair(path);
  bool k1 = false, am = false;
  for (const auto& r : m.repairs) {
    k1 = k1 || std::fabs(r.point + 23.0) < 1e-6;
    am = am || std::fabs(r.point + 47.0) < 1e-6;
  }
  EXPECT_TRUE(k1);
  EXPECT_TRUE(am);
}
