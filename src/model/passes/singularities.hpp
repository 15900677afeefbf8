// Removable-singularity repair.
//
// Why: gating rates and GHK fluxes are written as quotients whose numerator and
// denominator vanish together at one voltage V0: x/(exp(x)−1), 0.32(V+47.13)/(1−exp(−0.1
// (V+47.13))), z²VF²/RT·(c_i e^{zVF/RT} − c_o)/(e^{zVF/RT} − 1). The limit is finite, but
// evaluating the formula at or near V0 gives 0/0 = NaN or loses every digit. Seed 000
// shifted V by a crude offset; Chaste's main branch linearises over ±10 mV and changes the
// maths by up to 14% (models/cellml/SOURCES.md). We replace only a tiny window.
//
// How: for every division num/den in every algebraic and derivative, and every state x
// its denominator depends on (through algebraics; only the voltage when roles say which
// state it is), den is scanned over x ∈ [−200, 200] mV (in the model's units) at the
// initial state and default parameters; each sign change or zero is refined by bisection
// to V0 (poles, where |den| grows, are skipped). The smallest node containing the
// division that is finite on both sides of V0 — the division itself, or a product or
// quotient around it that holds the vanishing factor — is replaced by
//     select(|x − V0| < w,  N(V0−w) + (x − (V0−w))·(N(V0+w) − N(V0−w))/(2w),  N)
// where N(V0±w) are new expressions: N with x replaced by the constant V0±w (through the
// algebraics that depend on x) and folded, so they still follow parameters and the other
// states (e.g. the concentrations of a GHK flux).
//
// Window: numerator and denominator vary on a length scale L = |f'/f''| at V0 (1/k for
// e^{k(x−V0)}−1; the smaller of the two, since one of them may be linear), clamped to
// [0.1, 100] mV. With w = 1e-3·L the interpolation error is
// ≈ (w/L)²/8 relative ≈ 1e-7 and the cancellation error of the endpoints is ≈ ε/(w/L):
// 2e-13 in double, 6e-5 in float — a float build that needs better can pass a wider
// half_width (in the model's units of x; 1e-2·L gives ≈ 1e-5 both ways).
//
// Reports: each repair is appended to m.repairs and gets a note diagnostic; a division
// whose denominator vanishes while the expression blows up (a real pole) gets a warning.
// Limitation: V0 is found at the default parameters; a parameter that moves the root
// (e.g. a voltage shift) leaves the window at the old V0 (the formula is then used as
// written, exactly as without the repair).
#pragma once

#include "core/error.hpp"
#include "model/ir/model.hpp"

namespace hw::model {

void repair_singularities(Model& m, DiagnosticSink& sink);
// half_width > 0: the window half-width in the model's units of the variable; 0: automatic.
void repair_singularities(Model& m, DiagnosticSink& sink, double half_width);

}  // namespace hw::model
