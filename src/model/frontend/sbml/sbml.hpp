// SBML front end: reads an SBML model that is a system of ODEs into a flat Model.
//
// What it reads (docs/sbml.md has the details): parameters, compartments and species as
// symbols; rate rules (states), assignment rules (algebraics), initial assignments;
// function definitions (inlined at each call); unit definitions; reactions of species
// (their kinetic laws summed into each species' ODE); oxmeta role terms from bqbiol:is
// annotations. Roles are then found as for CellML (model/analysis/roles.hpp).
// Guarantees: anything the IR cannot represent — events, delays, algebraic rules,
// constraints, fast reactions, rateOf, factorial, quotient, packages — is an InputError
// naming the construct, its id and its line, never dropped; malformed input never crashes.
// Built without libSBML (libsbml5-dev), every call is an InputError saying how to get it.
#pragma once

#include <string>
#include <string_view>

#include "model/ir/model.hpp"

namespace hw::model {

// Reads and converts the SBML file at `path`.
Model load_sbml(const std::string& path);

// Parses SBML text; `filename` is used in messages and as Model::source_file.
Model parse_sbml(std::string_view xml, const std::string& filename);

// False when Heartwave was built without libSBML (then the two calls above throw).
bool sbml_reader_available();

}  // namespace hw::model
