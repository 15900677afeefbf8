// IR expressions as MathML content markup, for the CellML 2.0 and SBML printers.
//
// Guarantee: the CellML and SBML front ends read each printed expression back into the
// same expression tree, node for node, except that `select` comes back as a one-piece
// `piecewise` (same value) and NaN / infinite constants come back as constants of the
// same class. Binary nodes stay binary (no n-ary flattening), so sums keep their order of
// evaluation and a round trip keeps every rounding. Printers never simplify.
#pragma once

#include <string>

#include "model/ir/model.hpp"

namespace hw::model {

struct MathmlStyle {
  // CellML 2.0 requires units on every <cn>: cellml:units="dimensionless".
  bool cn_units = false;
  // SBML names the independent variable with a csymbol, not a <ci>.
  bool time_csymbol = false;
};

// One expression of `m` as MathML (no <math> wrapper, no line breaks).
std::string print_mathml(const Model& m, ExprId e, const MathmlStyle& style);

}  // namespace hw::model
