// Arithmetic per cell-step, counted from what the printers print: the work a compute roof
// is made of (`model inspect`, `heartwave bench population`).
//
// Counted over the statement lists the C++ and CUDA printers emit (printer_common.hpp), each
// node of a function's expression DAG once (the printers make a node used twice one
// temporary), after the printers' strength reductions (powi by repeated squaring, sqrt for
// x^0.5, division by ±2^k as a multiplication); plus the integrator's own arithmetic per
// state, from the formulas of runtime/integrators.hpp (the exponential update's expm1 and
// quotient, the LU of each linear block). Once-per-cell constants are not counted: a kernel
// computes them once per launch of many steps.
//
// What the counts are not: instructions. A compiler fuses a multiply and an add into one
// FMA, and a special function is a sequence of instructions whose cost the device's measured
// rate for that function (device/arith_rates.hpp) stands for.
#pragma once

#include <map>
#include <string>

#include "runtime/integrators.hpp"
#include "model/ir/model.hpp"

namespace hw::model {

struct OpCount {
  double flops = 0;      // add, sub, mul, neg, fabs, min, max, floor, ceil (one each)
  double divisions = 0;  // x / y, y not a literal
  // The distinct y of those: what a float kernel that shared one reciprocal between the
  // divisions by one y would compute (the compute roof's count, device/arith_rates.hpp).
  double distinct_divisors = 0;
  double constant_divisions = 0;  // x / c for a literal c (not ±2^k: that is a multiplication)
  double selects = 0;    // comparisons, logic and ?: (control, not arithmetic)
  std::map<std::string, double> specials;  // exp, expm1, log, pow, sqrt, tanh, ... → calls

  double special_calls() const;
  // "1234 flops, 56 div (by 30 distinct divisors), 12 div by literal, 78 select; exp 40, ..."
  std::string str() const;
};

// What cell_maths "fast" (cell_maths.hpp) replaces in one evaluation of the model's rates with
// their Jacobian diagonal (rhs_jac, what the Rush-Larsen and GRL integrators call): calls of
// exp, log or log10, and pow (not pow by a small integer or 0.5), and divisions (not by ±2^k),
// each node once, outside the values a float kernel computes in double. The integrator's own
// maths (the expm1 of its exponential update) keeps its accuracy and is not counted.
struct FastIntrinsicCount {
  int exp = 0, log = 0, pow = 0, div = 0;
  int total() const { return exp + log + pow + div; }
  // "12 exp → __expf, 4 log → __logf, 0 pow → __powf, 80 divisions → __fdividef"
  std::string str() const;
};
FastIntrinsicCount count_fast_intrinsics(const Model& analysed);

// Per cell-step of `method` on an analysed model (the counts of the model as the kernel
// prints it: specialise its parameters first to count what a specialised kernel does).
OpCount count_operations(const Model& analysed, cell::Integrator method);

}  // namespace hw::model
