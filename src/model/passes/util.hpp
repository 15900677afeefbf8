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

// What expressions read, looking through the algebraics they use (memoised per algebraic):
// which states (a flag per state) and whether time. For passes that ask it of many
// expressions of one model (linear blocks, thresholds).
class ExprReads {
 public:
  struct Set {
    std::vector<std::uint8_t> states;
    bool time = false;
    bool any_state() const;
  };
  explicit ExprReads(const Model& m);
  Set of(ExprId e);  // kNoExpr reads nothing

 private:
  void add(ExprId e, Set& out);
  const Set& algebraic(std::uint32_t k);

  const Model& m_;
  std::vector<Set> alg_;
  std::vector<std::uint8_t> done_;
};

// Puts the algebraics in a new order: order[new_index] = old_index (a permutation). Every
// VarKind::algebraic node everywhere and roles.stimulus_current follow.
void renumber_algebraics(Model& m, const std::vector<std::uint32_t>& order);

}  // namespace hw::model
