// A Model as a CellML 2.0 document (`heartwave model convert -o x.cellml`).
//
// What it writes: one component holding every symbol (time, states with their initial
// values and ODEs, parameters with their values, algebraics with their equations), a
// units definition for each unit that CellML does not predefine, and the oxmeta terms of
// the roles as RDF annotations on variable ids, so that the CellML front end finds the
// same roles. Guarantee: load_cellml of the text gives back the same symbols, in the same
// order, with the same names, values and expression trees (see mathml_printer.hpp for the
// one node kind that changes form), hence the same trace to rounding. Unit-converted
// copies that the 1.x flattener made are kept as the algebraics they are.
#pragma once

#include <string>

#include "model/ir/model.hpp"

namespace hw::model {

std::string print_cellml2(const Model& m);

}  // namespace hw::model
