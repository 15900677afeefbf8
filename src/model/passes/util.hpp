// Helpers shared by the passes (not a pass): walking every root of a Model at once and
// renumbering algebraics. Kept here so that each pass renumbers and rewrites the same way.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "model/ir/model.hpp"

namespace hw::model {

// Rewrites every root of the model (algebraic definitions, derivatives, and the Jacobian
// diagonals, blocks and thresholds of the state analysis when present) with one memoised rewrite() call.
void rewrite_model(Model& m, const std::function<ExprId(ExprId, std::vector<ExprId>&)>& rebuild);

// Algebraic indices referenced directly (not transitively) by expression e, ascending.
std::vector<std::uint32_t> algebraic_refs(const ExprPool& pool, ExprId e);

// Puts the algebraics in a new order: order[new_index] = old_index (a permutation). Every
// VarKind::algebraic node everywhere and roles.stimulus_current follow.
void renumber_algebraics(Model& m, const std::vector<std::uint32_t>& order);

}  // namespace hw::model
