// A Model as an SBML Level 3 Version 2 document (`heartwave model convert -o x.sbml`).
//
// What it writes: every state, parameter and algebraic as a <parameter> (states and
// algebraics non-constant), a <rateRule> per ODE and an <assignmentRule> per algebraic,
// time as the SBML time csymbol with the model's timeUnits, a unitDefinition for each unit
// SBML does not predefine, and the oxmeta role terms as bqbiol:is annotations so that the
// SBML front end finds the same roles. No compartments, species or reactions: a cell model
// in the IR is a plain ODE system. Printed as text, so writing SBML needs no libSBML.
// Guarantee: the SBML front end reads it back into the same symbols, in the same order,
// with the same names, values and expression trees (mathml_printer.hpp), hence the same
// trace to rounding.
#pragma once

#include <string>

#include "model/ir/model.hpp"

namespace hw::model {

std::string print_sbml(const Model& m);

}  // namespace hw::model
