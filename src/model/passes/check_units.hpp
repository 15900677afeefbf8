// Unit checking: infers the units of every expression from its symbols' units and reports
// dimension mismatches.
//
// Why: a wrong unit (mV added to V, ms compared with s) is a silent factor-of-1000 bug.
// Published CellML models are a little sloppy, so this pass only warns, never throws.
// Guarantees: a warning (at the defining variable's SourceLoc) for each addition,
// subtraction, min/max, comparison, piecewise branch, assignment or ODE whose two sides
// have different dimensions; a note where the dimensions agree but the scales differ
// (mV vs V). Inline constants carry no units in the IR and adopt whatever they meet.
#pragma once

#include "core/error.hpp"
#include "model/ir/model.hpp"

namespace hw::model {

void check_units(const Model& m, DiagnosticSink& sink);

}  // namespace hw::model
