// Algebraics that a float kernel computes in double.
//
// Why: the GPU and the float CPU kernels step a model in single precision. Most models lose
// nothing that matters, but a few lose every digit of one value and then divide by it.
// Decker 2009's L-type calcium Markov chain has y = (1 − IV_inf)/τ with IV_inf =
// (1/(1 + e^{(V+17.5)/3}) + 0.25)/1.25: at rest e^{…} ≈ 7·10⁻¹¹, so IV_inf rounds to exactly
// 1 in float, y is 0, and the detailed-balance rate δ_I = … /(y·x*·…) is 0/0. Three
// derivatives of the chain are NaN at the initial state and every float run of the model
// stops on its first step, while double carries y to six digits.
//
// How: the model is evaluated at the initial state, with the voltage also set to every 10 mV
// over [−100, 60] mV, three ways from the same float-rounded inputs: all in double (the
// reference), all in float, and mixed (algebraics marked wide in double, the rest in float).
// An output (a derivative, a Jacobian diagonal, a linear block entry) that is finite in
// double and not in float is traced back: every algebraic in its dependency cone is
// computed once more in float from the reference values of its operands, and one that is
// then not finite, or off by more than half its value, loses its digits by itself. It is
// marked wide with all the algebraics it depends on (a wide value is only as good as its
// operands), and the mixed evaluation is repeated until the outputs are finite (four rounds
// at most). If widening does not make fewer outputs finite, nothing is marked: an overflow
// inside a Jacobian expression, which no algebraic holds, is left to the integrators'
// finite_diagonal. Once-per-cell values are never wide (they live in the kernel's Real
// array).
//
// Printers declare a wide algebraic double and compute it in double (its operands read as
// double); the interpreter computes it in double too, so the oracle keeps matching. In a
// double kernel nothing changes. Each widened value gets a note (code float.widened); an
// output that stays non-finite in float gets a note (float.nonfinite) naming where.
#pragma once

#include "core/error.hpp"
#include "model/ir/model.hpp"

namespace hw::model {

void widen_for_float(Model& m, DiagnosticSink& sink);

}  // namespace hw::model
