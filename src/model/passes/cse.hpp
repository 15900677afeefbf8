// Common-subexpression elimination across the whole model.
//
// Why: models repeat subexpressions (exp(V·F/RT) in every GHK flux, V+47.13 in a rate's
// numerator and denominator, the derivative pass's reuse of its input). Hash-consing
// already makes equal subexpressions one node, so finding them is a use count; this pass
// turns each shared node into a named temporary so every printer computes it once.
//
// Guarantees: a non-leaf, non-boolean node (and not the negation of a leaf) referenced
// from two or more places across all algebraic definitions and derivatives (two parent
// nodes, the same parent twice as in x·x, or several roots) is computed once: if it is
// the whole definition of an algebraic, the other users read that algebraic; otherwise a
// new algebraic `_cse_N` (synthetic = true) holds it. Algebraics stay in dependency order
// (a new one is placed right before its first user). Values are unchanged.
#pragma once

#include "model/ir/model.hpp"

namespace hw::model {

void eliminate_common_subexpressions(Model& m);

}  // namespace hw::model
