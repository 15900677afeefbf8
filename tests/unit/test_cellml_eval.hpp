// A tiny tree-walking evaluator used only by the tests (CellML and .hwm) to check that loaded
// models compute sensible numbers. Deliberately independent of the project's interpreter
// so that it can serve as a second opinion.
#pragma once

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "model/ir/model.hpp"

namespace hw::model::testing {

class TinyEval {
 public:
  TinyEval(const Model& m, std::vector<double> y, double t)
      : m_(m), y_(std::move(y)), t_(t), alg_(m.algebraics.size()), mark_(m.algebraics.size(), 0) {}

  double algebraic(std::uint32_t i) {
    if (mark_[i] == 2) return alg_[i];
    if (mark_[i] == 1) throw std::runtime_error("algebraic cycle at " + m_.algebraics[i].name);
    mark_[i] = 1;
    alg_[i] = eval(m_.algebraics[i].expr);
    mark_[i] = 2;
    return alg_[i];
  }

  double derivative(std::size_t s) { return eval(m_.derivatives[s]); }

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
      case Op::piecewise: {
        std::size_t k = 0;
        for (; k + 1 < n.args.size(); k += 2)
          if (a(k) != 0) return a(k + 1);
        return a(k);
      }
    }
    throw std::runtime_error("TinyEval: unknown op");
  }

 private:
  const Model& m_;
  std::vector<double> y_;
  double t_;
  std::vector<double> alg_;
  std::vector<int> mark_;
};

inline std::vector<double> initial_state(const Model& m) {
  std::vector<double> y;
  for (const auto& s : m.states) y.push_back(s.initial);
  return y;
}

}  // namespace hw::model::testing
