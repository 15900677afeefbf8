// Parameters as constants: the model of one run, where every parameter that does not vary
// between cells is known when the kernel is compiled.
//
// Why: a GPU kernel is compiled for each run anyway (NVRTC), and a model's parameters are
// mostly fixed for it. Printed as constants, expressions over parameters fold away, pow with
// a parameter exponent becomes repeated multiplication (Karma's n^M), divisions by
// parameters become divisions by literals, and the cell needs fewer registers. Values are
// those of the run (region parameters and scales applied), so nothing the run computes
// changes beyond rounding: folding is done in double by the interpreter's own arithmetic.
#pragma once

#include <optional>
#include <vector>

#include "model/ir/model.hpp"

namespace hw::model {

// A copy of `analysed` in which parameter k becomes the constant *values[k] wherever values[k]
// is set (the parameter stays in the list, unused), then constants are folded. values has
// one entry per parameter; std::nullopt keeps the parameter (it varies per cell).
Model specialise_parameters(const Model& analysed, const std::vector<std::optional<double>>& values);

}  // namespace hw::model
