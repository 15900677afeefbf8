// Symbolic differentiation.
//
// Why: semi-implicit Euler and Rush-Larsen need ∂f_i/∂y_i. Seed 000 estimated it by a
// finite difference, and its printed optimiser got it wrong (notes §7.3); an exact
// symbolic derivative has neither truncation error nor that bug.
//
// Guarantees: differentiate(m, e, kind, index) returns an expression whose value is
// ∂e/∂x where x is the variable (kind, index), wherever e is differentiable. Algebraic
// references are followed by the chain rule (each algebraic's derivative is computed once
// per call and shared); the result may read algebraic values, so it is evaluated after
// the algebraics. select/piecewise differentiate branch-wise (conditions are locally
// constant); min/max/abs as selects; floor, ceil and relations have derivative 0;
// rem(a, b) = a − b·trunc(a/b) gives ∂a − trunc(a/b)·∂b. Results are lightly simplified
// (zeros and ones removed); call fold_expr for more.
#pragma once

#include <cstdint>

#include "model/ir/model.hpp"

namespace hw::model {

ExprId differentiate(Model& m, ExprId e, VarKind kind, std::uint32_t index);

}  // namespace hw::model
