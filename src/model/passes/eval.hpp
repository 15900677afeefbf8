// Scalar semantics of every IR operation, in one place, and a point evaluator.
//
// Why: constant folding, singularity detection, tests and the interpreter (the oracle)
// must agree on what each Op means (booleans are 1/0, any non-zero is true, rem is fmod,
// piecewise takes the first true condition, a piecewise with no true condition and no
// "otherwise" yields NaN as the front ends encode it). Having one definition makes a
// disagreement between the passes and the oracle impossible.
//
// apply_op is templated on Real so that float evaluation really happens in float.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>

#include "model/ir/model.hpp"

namespace hw::model {

// The value of `op` applied to its n already-evaluated arguments (not for leaves).
template <class Real>
inline Real apply_op(Op op, const Real* a, std::size_t n) {
  const auto b = [](bool v) { return v ? Real(1) : Real(0); };
  switch (op) {
    case Op::constant:
    case Op::variable: return std::numeric_limits<Real>::quiet_NaN();
    case Op::add: return a[0] + a[1];
    case Op::sub: return a[0] - a[1];
    case Op::mul: return a[0] * a[1];
    case Op::div: return a[0] / a[1];
    case Op::neg: return -a[0];
    case Op::pow: return std::pow(a[0], a[1]);
    case Op::exp: return std::exp(a[0]);
    case Op::log: return std::log(a[0]);
    case Op::log10: return std::log10(a[0]);
    case Op::sqrt: return std::sqrt(a[0]);
    case Op::abs: return std::fabs(a[0]);
    case Op::floor: return std::floor(a[0]);
    case Op::ceil: return std::ceil(a[0]);
    case Op::sin: return std::sin(a[0]);
    case Op::cos: return std::cos(a[0]);
    case Op::tan: return std::tan(a[0]);
    case Op::asin: return std::asin(a[0]);
    case Op::acos: return std::acos(a[0]);
    case Op::atan: return std::atan(a[0]);
    case Op::sinh: return std::sinh(a[0]);
    case Op::cosh: return std::cosh(a[0]);
    case Op::tanh: return std::tanh(a[0]);
    case Op::asinh: return std::asinh(a[0]);
    case Op::acosh: return std::acosh(a[0]);
    case Op::atanh: return std::atanh(a[0]);
    case Op::min: return std::fmin(a[0], a[1]);
    case Op::max: return std::fmax(a[0], a[1]);
    case Op::rem: return std::fmod(a[0], a[1]);
    case Op::lt: return b(a[0] < a[1]);
    case Op::le: return b(a[0] <= a[1]);
    case Op::gt: return b(a[0] > a[1]);
    case Op::ge: return b(a[0] >= a[1]);
    case Op::eq: return b(a[0] == a[1]);
    case Op::ne: return b(a[0] != a[1]);
    case Op::logical_and: return b(a[0] != Real(0) && a[1] != Real(0));
    case Op::logical_or: return b(a[0] != Real(0) || a[1] != Real(0));
    case Op::logical_xor: return b((a[0] != Real(0)) != (a[1] != Real(0)));
    case Op::logical_not: return b(a[0] == Real(0));
    case Op::select: return a[0] != Real(0) ? a[1] : a[2];
    case Op::piecewise: {
      for (std::size_t i = 0; i + 1 < n; i += 2)
        if (a[i] != Real(0)) return a[i + 1];
      return a[n - 1];
    }
  }
  return std::numeric_limits<Real>::quiet_NaN();
}

// The value of expression e at one point (double). Algebraic variables are read from
// `alg` when it is non-null, else computed on demand from their definitions (so a caller
// may vary a state and see every dependent algebraic follow). Throws hw::Error on an
// algebraic that (transitively) refers to itself.
double evaluate_point(const Model& m, ExprId e, double t, const double* y, const double* p,
                      const double* alg = nullptr);

}  // namespace hw::model

namespace hw::model {

// One expression compiled to a flat list for repeated evaluation at many points (the
// singularity search evaluates a denominator hundreds of times). Algebraic references
// are inlined: their definitions are evaluated as part of the tape.
class Tape {
 public:
  Tape(const Model& m, ExprId root);
  double operator()(double t, const double* y, const double* p) const;

 private:
  struct Ins {
    Op op;
    VarKind kind;
    std::uint32_t index;
    double value;
    std::uint32_t first_arg, n_args;
  };
  std::uint32_t add(const Model& m, ExprId root, std::vector<std::uint8_t>& busy);
  std::vector<Ins> ins_;
  std::vector<std::uint32_t> arg_slots_;
  std::vector<std::int64_t> slot_of_;  // by ExprId, -1 = not yet
  std::uint32_t result_ = 0;
};

}  // namespace hw::model
