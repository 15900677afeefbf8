// Shared by the code-generation tests: a hand-built model with awkward names and every
// printer feature, and an independent oracle that evaluates the IR with eval.hpp's
// apply_op (the same scalar semantics the passes and the interpreter use) in float or
// double, wrapped as a cell model concept so the integrators of runtime/integrators.hpp run it.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "model/ir/model.hpp"
#include "model/passes/eval.hpp"

namespace hw::model::cgtest {

// Evaluates every node of every root in topological order: a tree walk, obviously right.
struct EvalModel {
  const Model* m = nullptr;

  int n_states() const { return static_cast<int>(m->states.size()); }
  int n_params() const { return static_cast<int>(m->parameters.size()); }
  int n_constants() const {
    int n = 0;
    for (const auto& a : m->algebraics) n += a.once_per_cell;
    return n;
  }
  bool is_gate(int i) const { return m->analysis[i].is_gate; }

  template <class Real>
  Real eval(ExprId id, Real t, const Real* y, const Real* p, const std::vector<Real>& alg) const {
    const Node& n = m->pool.node(id);
    if (n.op == Op::constant) return static_cast<Real>(n.value);
    if (n.op == Op::variable) {
      switch (n.var_kind) {
        case VarKind::time: return t;
        case VarKind::state: return y[n.index];
        case VarKind::param: return p[n.index];
        case VarKind::algebraic: return alg[n.index];
      }
    }
    std::vector<Real> a;
    for (ExprId c : n.args) a.push_back(eval(c, t, y, p, alg));
    return apply_op<Real>(n.op, a.data(), a.size());
  }

  // All algebraics in order; once-per-cell ones come from c (as the kernels do).
  template <class Real>
  std::vector<Real> algebraic_values(Real t, const Real* y, const Real* p, const Real* c) const {
    std::vector<Real> alg(m->algebraics.size());
    int ci = 0;
    for (std::size_t k = 0; k < alg.size(); ++k)
      if (m->algebraics[k].once_per_cell && c)
        alg[k] = c[ci++];
      else if (!m->algebraics[k].once_per_cell && !y)  // constants(): no state to read
        alg[k] = std::numeric_limits<Real>::quiet_NaN();
      else
        alg[k] = eval(m->algebraics[k].expr, t, y, p, alg);
    return alg;
  }
  template <class Real>
  void constants(const Real* p, Real* c) const {
    const std::vector<Real> alg = algebraic_values<Real>(Real(0), nullptr, p, nullptr);
    int ci = 0;
    for (std::size_t k = 0; k < alg.size(); ++k)
      if (m->algebraics[k].once_per_cell) c[ci++] = alg[k];
  }
  template <class Real>
  void rhs(Real t, const Real* y, const Real* p, const Real* c, Real* dydt) const {
    const std::vector<Real> alg = algebraic_values(t, y, p, c);
    for (std::size_t i = 0; i < m->states.size(); ++i) dydt[i] = eval(m->derivatives[i], t, y, p, alg);
  }
  template <class Real>
  void rhs_jac(Real t, const Real* y, const Real* p, const Real* c, Real* dydt, Real* jd) const {
    const std::vector<Real> alg = algebraic_values(t, y, p, c);
    for (std::size_t i = 0; i < m->states.size(); ++i) {
      dydt[i] = eval(m->derivatives[i], t, y, p, alg);
      jd[i] = eval(m->analysis[i].jacobian_diag, t, y, p, alg);
    }
  }
};

// A two-state model that exercises every printer path: once-per-cell constants, select,
// relations used as values, logic, integer and half powers, divisions by 2^k and by 3,
// negative literals, shared subexpressions, and names that are C keywords, reserved
// identifiers or comment terminators.
inline Model awkward_model() {
  Model m;
  m.name = "awk*/ward\nmodel";
  ExprPool& P = m.pool;
  m.time.name = "time";
  m.states.push_back({});
  m.states[0].name = "int";  // a C keyword
  m.states[0].initial = -80.0;
  m.states.push_back({});
  m.states[1].name = "__x";  // reserved in C++
  m.states[1].initial = 0.1;
  const char* pnames[] = {"a*/b", "??/", "p\\", "g_K"};
  const double pvals[] = {0.5, 2.0, -1.25, 0.3};
  for (int k = 0; k < 4; ++k) {
    Parameter p;
    p.name = pnames[k];
    p.value = pvals[k];
    m.parameters.push_back(p);
  }
  const ExprId V = P.state(0), x = P.state(1), t = P.time();
  const ExprId p0 = P.param(0), p1 = P.param(1), p2 = P.param(2), p3 = P.param(3);
  auto alg = [&](const char* name, ExprId e, bool once) {
    Algebraic a;
    a.name = name;
    a.expr = e;
    a.once_per_cell = once;
    m.algebraics.push_back(a);
    return P.algebraic(static_cast<std::uint32_t>(m.algebraics.size() - 1));
  };
  // once per cell
  const ExprId k0 = alg("double", P.add(P.mul(p0, p1), P.pow(p3, P.constant(0.5))), true);
  const ExprId k1 = alg("k1 */ #define", P.div(k0, P.constant(3.0)), true);
  // every step
  const ExprId e = P.call(Op::exp, P.div(P.add(V, P.constant(40.0)), P.constant(-8.0)));
  const ExprId alpha = alg("alpha", P.div(P.mul(P.constant(0.1), e), P.add(P.constant(1.0), e)), false);
  const ExprId beta = alg("beta", P.add(P.mul(k1, P.pow(P.sub(P.constant(1.0), P.call(Op::tanh, P.div(V, P.constant(4.0)))), P.constant(3.0))),
                                        P.constant(0.05)), false);
  const ExprId stim = alg("i_stim",
      P.select(P.make(Op::logical_and, {P.make(Op::ge, {t, P.constant(1.0)}),
                                        P.make(Op::lt, {t, P.constant(3.0)})}),
               p2, P.constant(0.0)), false);
  const ExprId flag = P.mul(P.make(Op::gt, {V, P.constant(-50.0)}), P.constant(2.0));
  const ExprId iion = alg("I ion", P.add(P.mul(P.mul(p3, P.pow(x, P.constant(4.0))), P.sub(V, P.constant(-85.0))),
                                         P.add(flag, P.make(Op::min, {P.call(Op::abs, V), P.constant(1e3)}))), false);
  m.derivatives.push_back(P.neg(P.add(iion, stim)));
  m.derivatives.push_back(P.sub(P.mul(alpha, P.sub(P.constant(1.0), x)), P.mul(beta, x)));
  // Jacobian diagonals by hand: d/dV of -(iion+stim) and d/dx of alpha(1-x) - beta x.
  const ExprId dflag_dV = P.constant(0.0);
  const ExprId dabs = P.select(P.make(Op::lt, {P.call(Op::abs, V), P.constant(1e3)}),
                               P.select(P.make(Op::ge, {V, P.constant(0.0)}), P.constant(1.0), P.constant(-1.0)),
                               P.constant(0.0));
  m.analysis.resize(2);
  m.analysis[0].jacobian_diag = P.neg(P.add(P.add(P.mul(p3, P.pow(x, P.constant(4.0))), dflag_dV), dabs));
  m.analysis[1].jacobian_diag = P.neg(P.add(alpha, beta));
  m.analysis[1].is_gate = true;
  return m;
}

}  // namespace hw::model::cgtest

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <type_traits>

#include "runtime/cell_kernel.hpp"
#include "runtime/integrators.hpp"

namespace hw::model::cgtest {

// Compiled models go to a cache of the tests' own (kept between runs: re-runs are fast).
inline void use_test_cache() {
  if (!std::getenv("HEARTWAVE_CACHE")) {
    const auto dir = std::filesystem::temp_directory_path() / "heartwave-test-cache";
    setenv("HEARTWAVE_CACHE", dir.c_str(), 0);
  }
}

// Relative, with an absolute floor of rel·1e-6 in the state's own units (mV, mM, 0..1):
// a state that one step moves from 0 to ~1e-11 through cancelling currents (FK 1998's u)
// differs by a few ulp of those currents between libmvec's vector exp and libm's scalar
// one, which is far below anything a model resolves but large relative to 1e-11.
inline bool close(double a, double b, double rel) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::fabs(a - b) <= rel * std::max({std::fabs(a), std::fabs(b), 1e-6});
}

// One step of every integrator (or of those in the bit mask `methods`: bit i is
// hw::cell::Integrator(i)), from the initial state and from perturbed random states, with
// uniform and with per-cell parameters: `kernel` against the oracle, in Real. `oracle` is an
// EvalModel (cell model concept) or a CellKernel (e.g. the interpreter).
template <class Real, class Oracle = EvalModel>
void expect_steps_match(const Model& m, const hw::cell::CellKernel& kernel, double dt,
                        double rel, const Oracle* oracle_in = nullptr, unsigned seed = 1,
                        std::uint32_t methods = ~0u) {
  const int ns = static_cast<int>(m.states.size()), np = static_cast<int>(m.parameters.size());
  const std::size_t n = 5;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Real> y0(ns * n), p_uniform(std::max(np, 1)), p_cells(std::max<std::size_t>(np * n, 1));
  for (int k = 0; k < ns; ++k)
    for (std::size_t i = 0; i < n; ++i)
      y0[k * n + i] = static_cast<Real>(m.states[k].initial * (i == 0 ? 1.0 : 1.0 + 0.05 * u(rng)));
  for (int k = 0; k < np; ++k) {
    p_uniform[k] = static_cast<Real>(m.parameters[k].value);
    for (std::size_t i = 0; i < n; ++i)
      p_cells[k * n + i] = static_cast<Real>(m.parameters[k].value * (1.0 + 0.02 * u(rng)));
  }
  const EvalModel eval{&m};
  for (int method = 0; method < hw::cell::kIntegratorCount; ++method) {
    if (!(methods >> method & 1u)) continue;
    const auto integ = static_cast<hw::cell::Integrator>(method);
    for (bool per_cell : {false, true}) {
      std::vector<Real> got = y0, want = y0;
      hw::cell::Batch<Real> b{n, n, got.data(), per_cell ? p_cells.data() : p_uniform.data(), per_cell};
      kernel.step(integ, Real(0.5) * static_cast<Real>(dt), static_cast<Real>(dt), 1, b);
      b.y = want.data();
      const Real t0 = Real(0.5) * static_cast<Real>(dt);
      if constexpr (std::is_base_of_v<hw::cell::CellKernel, Oracle>)
        oracle_in->step(integ, t0, static_cast<Real>(dt), 1, b);
      else
        hw::cell::step_batch(oracle_in ? *oracle_in : eval, integ, t0, static_cast<Real>(dt), 1, b);
      int failures = 0;
      for (std::size_t j = 0; j < got.size() && failures < 5; ++j)
        if (!close(got[j], want[j], rel)) {
          ++failures;
          ADD_FAILURE() << m.name << ": " << hw::cell::integrator_name(integ)
                        << (per_cell ? " (per-cell params)" : "") << " state " << j / n
                        << " cell " << j % n << ": generated " << got[j] << " vs oracle "
                        << want[j] << " (from " << y0[j] << ")";
        }
    }
  }
}

// constants(), rhs_jac() and algebraics() in double at the initial state.
inline void expect_functions_match(const Model& m, const hw::cell::CellKernel& kernel, double rel) {
  const EvalModel oracle{&m};
  ASSERT_EQ(kernel.n_states(), static_cast<int>(m.states.size()));
  ASSERT_EQ(kernel.n_params(), static_cast<int>(m.parameters.size()));
  ASSERT_EQ(kernel.n_constants(), oracle.n_constants());
  ASSERT_EQ(kernel.n_algebraics(), static_cast<int>(m.algebraics.size()));
  for (std::size_t i = 0; i < m.states.size(); ++i)
    EXPECT_EQ(kernel.is_gate(static_cast<int>(i)), m.analysis[i].is_gate);
  std::vector<double> y, p;
  for (const auto& s : m.states) y.push_back(s.initial);
  for (const auto& q : m.parameters) p.push_back(q.value);
  std::vector<double> c1(oracle.n_constants() + 1), c2(oracle.n_constants() + 1);
  kernel.constants(p.data(), c1.data());
  oracle.constants(p.data(), c2.data());
  for (int k = 0; k < oracle.n_constants(); ++k) EXPECT_TRUE(close(c1[k], c2[k], rel)) << "c" << k;
  std::vector<double> f1(y.size() + 1), j1(y.size() + 1), f2(y.size() + 1), j2(y.size() + 1);
  kernel.rhs_jac(0.25, y.data(), p.data(), c2.data(), f1.data(), j1.data());
  oracle.rhs_jac(0.25, y.data(), p.data(), c2.data(), f2.data(), j2.data());
  double fscale = 0, jscale = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    fscale = std::max(fscale, std::fabs(f2[i]));
    jscale = std::max(jscale, std::fabs(j2[i]));
  }
  // Sums with cancellation may differ by an ulp of their terms: compare on the vector's scale.
  for (std::size_t i = 0; i < y.size(); ++i) {
    EXPECT_NEAR(f1[i], f2[i], rel * fscale + 1e-300) << "dydt " << i;
    EXPECT_NEAR(j1[i], j2[i], rel * jscale + 1e-300) << "jdiag " << i;
  }
  std::vector<double> a1(m.algebraics.size() + 1), a2;
  kernel.algebraics(0.25, y.data(), p.data(), c2.data(), a1.data());
  a2 = oracle.algebraic_values<double>(0.25, y.data(), p.data(), c2.data());
  for (std::size_t k = 0; k < m.algebraics.size(); ++k)
    EXPECT_TRUE(close(a1[k], a2[k], rel) || std::fabs(a1[k] - a2[k]) < 1e-10) << "algebraic " << k << ": " << a1[k] << " vs " << a2[k];
}

}  // namespace hw::model::cgtest
