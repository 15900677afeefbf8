// Constant folding and safe algebraic identities.
//
// Why: CellML models are full of literal arithmetic (unit conversions, -(47.13), 1/1000)
// and the singularity and derivative passes produce more; folding keeps printed code
// small and lets later passes see constants.
//
// Guarantees (values are unchanged at every point, in IEEE double, including inf/NaN, up
// to the sign of a zero result of x+0):
//  - an operation whose arguments are all constants becomes its value (computed by the
//    same apply_op as the interpreter). Parameters are never folded: they are overridable
//    per run and per cell.
//  - an algebraic whose definition folds to a constant is substituted by that constant in
//    every user (the algebraic itself stays, so it can still be reported by name).
//  - x+0, 0+x, x-0 → x (0-x is kept: -x would flip the sign of a zero); x*1, 1*x,
//    x/1 → x; -(-x) → x; x + (-y) → x - y; x - (-y) → x + y; pow(x,1) → x;
//    pow(x,0) → 1 (IEEE pow(x,0) is 1 even for NaN).
//  - x*0 is NOT folded: if x is inf or NaN at run time (a blow-up the model really has),
//    IEEE gives NaN and the run should see it.
//  - select with a constant condition → the chosen branch; select(c, a, a) → a;
//    piecewise pieces with constant-false conditions are dropped, a constant-true first
//    condition selects its value, a piecewise left with only "otherwise" becomes it.
//  - logic: and(0, x) → 0, or(1, x) → 1 (with a constant non-zero/zero either side).
//  - pow with an integer exponent stays pow: printers strength-reduce it.
#pragma once

#include "model/ir/model.hpp"

namespace hw::model {

void fold_constants(Model& m);

// The folded form of one expression (algebraic references are left as they are).
ExprId fold_expr(ExprPool& pool, ExprId e);

}  // namespace hw::model
