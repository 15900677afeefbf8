// piecewise → nested branch-free select.
//
// Why: seed 000 §4.1 replaced `if` by Heaviside products so that GPU threads do not
// diverge. A select (c ? a : b on values both computed) is the same idea without its
// numerical traps: the Heaviside form H·a + (1−H)·b turns an inf or NaN in the branch not
// taken into NaN (0·inf), and the seed's printed H = sign(x)·0.5 is wrong (it is −0.5 for
// x < 0; its erratum gives 0.5·(1+sign(x))). CUDA and vectorising C++ compilers turn a
// select into a predicated move, so this is branch-free where it matters.
//
// Guarantees: afterwards no Op::piecewise remains in any root (printers may refuse it);
// piecewise(c1,v1, c2,v2, …, otherwise) becomes select(c1, v1, select(c2, v2, … otherwise))
// — the first true condition wins, as before, so every value is unchanged.
#pragma once

#include "model/ir/model.hpp"

namespace hw::model {

void lower_piecewise(Model& m);

}  // namespace hw::model
