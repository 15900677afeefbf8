// Helpers shared by the .hwm tests: a structural comparison of two Models (each with its
// own ExprPool) and a tiny tree-walk evaluator, kept here so that these tests do not
// depend on the interpreter they are meant to feed.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/ir/model.hpp"
#include "model/ir/print.hpp"

namespace hwm_test {

using namespace hw::model;

// Same tree shape, ops, variables and constants (NaNs compare equal to NaNs).
inline bool same_tree(const Model& a, ExprId x, const Model& b, ExprId y) {
  std::vector<std::pair<ExprId, ExprId>> work{{x, y}};
  while (!work.empty()) {
    auto [i, j] = work.back();
    work.pop_back();
    const Node& n = a.pool.node(i);
    const Node& m = b.pool.node(j);
    if (n.op != m.op || n.args.size() != m.args.size()) return false;
    if (n.op == Op::constant) {
      bool both_nan = std::isnan(n.value) && std::isnan(m.value);
      if (!both_nan && std::bit_cast<std::uint64_t>(n.value) != std::bit_cast<std::uint64_t>(m.value))
        return false;
    }
    if (n.op == Op::variable && (n.var_kind != m.var_kind || n.index != m.index)) return false;
    for (std::size_t k = 0; k < n.args.size(); ++k) work.push_back({n.args[k], m.args[k]});
  }
  return true;
}

inline void expect_same_symbol(const Symbol& a, const Symbol& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.units_name, b.units_name) << a.name;
  EXPECT_EQ(a.ontology, b.ontology) << a.name;
}

inline void expect_same_model(const Model& a, const Model& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.citation, b.citation);
  expect_same_symbol(a.time, b.time);
  ASSERT_EQ(a.states.size(), b.states.size());
  ASSERT_EQ(a.parameters.size(), b.parameters.size());
  ASSERT_EQ(a.algebraics.size(), b.algebraics.size());
  ASSERT_EQ(a.derivatives.size(), b.derivatives.size());
  for (std::size_t i = 0; i < a.states.size(); ++i) {
    expect_same_symbol(a.states[i], b.states[i]);
    EXPECT_EQ(std::bit_cast<std::uint64_t>(a.states[i].initial),
              std::bit_cast<std::uint64_t>(b.states[i].initial)) << a.states[i].name;
  }
  for (std::size_t i = 0; i < a.parameters.size(); ++i) {
    expect_same_symbol(a.parameters[i], b.parameters[i]);
    EXPECT_EQ(std::bit_cast<std::uint64_t>(a.parameters[i].value),
              std::bit_cast<std::uint64_t>(b.parameters[i].value)) << a.parameters[i].name;
  }
  for (std::size_t i = 0; i < a.algebraics.size(); ++i) {
    expect_same_symbol(a.algebraics[i], b.algebraics[i]);
    EXPECT_TRUE(same_tree(a, a.algebraics[i].expr, b, b.algebraics[i].expr))
        << a.algebraics[i].name << ": " << to_infix(a, a.algebraics[i].expr) << "\n vs "
        << to_infix(b, b.algebraics[i].expr);
  }
  for (std::size_t i = 0; i < a.derivatives.size(); ++i)
    EXPECT_TRUE(same_tree(a, a.derivatives[i], b, b.derivatives[i]))
        << "d/dt " << a.states[i].name << ": " << to_infix(a, a.derivatives[i]) << "\n vs "
        << to_infix(b, b.derivatives[i]);
}

// Evaluates expressions of one model at (t, y) with the model's parameter values;
// algebraics are evaluated on demand, in any order, and memoised.
class Evaluator {
 public:
  Evaluator(const Model& m, double t, const std::vector<double>& y) : m_(m), t_(t), y_(y) {
    alg_.assign(m.algebraics.size(), std::numeric_limits<double>::quiet_NaN());
    state_.assign(m.algebraics.size(), 0);
  }

  double algebraic(std::uint32_t i) {
    if (state_[i] == 2) return alg_[i];
    if (state_[i] == 1) throw std::runtime_error("cycle through " + m_.algebraics[i].name);
    state_[i] = 1;
    alg_[i] = eval(m_.algebraics[i].expr);
    state_[i] = 2;
    return alg_[i];
  }

  double eval(ExprId id) {
    const Node& n = m_.pool.node(id);
    auto a = [&](std::size_t k) { return eval(n.args[k]); };
    switch (n.op) {
      case Op::constant: return n.value;
      case Op::variable:
        switch (n.var_kind) {
          case VarKind::time: return t_;
          case VarKind::state: return y_.at(n.index);
          case VarKind::param: return m_.parameters.at(n.index).value;
          case VarKind::algebraic: return algebraic(n.index);
        }
        break;
      case Op::add: return a(0) + a(1);
      case Op::sub: return a(0) - a(1);
      case Op::mul: return a(0) * a(1);
      case Op::div: return a(0) / a(1);
      case Op::neg: return -a(0);
      case Op::pow: return std::pow(a(0), a(1));
      case Op::exp: return std::exp(a(0));
      case Op::log: return std::log(a(0));
      case Op::log10: return std::log10(a(0));
      case Op::sqrt: return std::sqrt(a(0));
      case Op::abs: return std::fabs(a(0));
      case Op::floor: return std::floor(a(0));
      case Op::ceil: return std::ceil(a(0));
      case Op::sin: return std::sin(a(0));
      case Op::cos: return std::cos(a(0));
      case Op::tan: return std::tan(a(0));
      case Op::asin: return std::asin(a(0));
      case Op::acos: return std::acos(a(0));
      case Op::atan: return std::atan(a(0));
      case Op::sinh: return std::sinh(a(0));
      case Op::cosh: return std::cosh(a(0));
      case Op::tanh: return std::tanh(a(0));
      case Op::asinh: return std::asinh(a(0));
      case Op::acosh: return std::acosh(a(0));
      case Op::atanh: return std::atanh(a(0));
      case Op::min: return std::fmin(a(0), a(1));
      case Op::max: return std::fmax(a(0), a(1));
      case Op::rem: return std::fmod(a(0), a(1));
      case Op::lt: return a(0) < a(1);
      case Op::le: return a(0) <= a(1);
      case Op::gt: return a(0) > a(1);
      case Op::ge: return a(0) >= a(1);
      case Op::eq: return a(0) == a(1);
      case Op::ne: return a(0) != a(1);
      case Op::logical_and: return (a(0) != 0) && (a(1) != 0);
      case Op::logical_or: return (a(0) != 0) || (a(1) != 0);
      case Op::logical_xor: return (a(0) != 0) != (a(1) != 0);
      case Op::logical_not: return a(0) == 0;
      case Op::select: return a(0) != 0 ? a(1) : a(2);
      case Op::piecewise:
        for (std::size_t k = 0; k + 1 < n.args.size(); k += 2)
          if (a(k) != 0) return a(k + 1);
        return a(n.args.size() - 1);
    }
    throw std::runtime_error("unknown op");
  }

 private:
  const Model& m_;
  double t_;
  const std::vector<double>& y_;
  std::vector<double> alg_;
  std::vector<int> state_;
};

inline std::vector<double> derivatives(const Model& m, double t, const std::vector<double>& y) {
  Evaluator ev(m, t, y);
  std::vector<double> dy;
  for (ExprId d : m.derivatives) dy.push_back(ev.eval(d));
  return dy;
}

}  // namespace hwm_test
