// Dependency order of algebraics.
//
// Why: every printer and the interpreter evaluate algebraics in list order, so each must
// come after the algebraics it reads. Reads of time, states and parameters do not
// constrain the order (they are inputs of a step), as in seed 002.
//
// Guarantees: afterwards each algebraic refers only to algebraics before it; the order is
// stable (an already-ordered model is unchanged; otherwise each algebraic is placed right
// after its dependencies, in the original order where there is a choice); every
// VarKind::algebraic node and roles.stimulus_current are renumbered. A cycle is a
// hw::InputError located at the first variable of the cycle, naming the loop in order:
// "algebraic loop: a -> b -> c -> a" (a reads b, b reads c, c reads a).
#pragma once

#include "model/ir/model.hpp"

namespace hw::model {

void sort_algebraics(Model& m);

}  // namespace hw::model
