// Once-per-cell classification of algebraics.
//
// Why: an algebraic that depends only on parameters and constants (e.g. RT/F, E_K when
// the concentrations are parameters) has one value per cell for the whole run; backends
// compute it in constants() and read it every step instead of recomputing (libCellML's
// "computed constant"; STYLE.md §7).
//
// Guarantees: Algebraic::once_per_cell is true exactly for the algebraics whose
// definition reads no time and no state, directly or through other algebraics.
#pragma once

#include "model/ir/model.hpp"

namespace hw::model {

void classify_algebraics(Model& m);

}  // namespace hw::model
