// Small text helpers shared by the XML printers (CellML 2.0, SBML, MathML).
//
// Why: both XML printers write numbers that must read back to the same double, names and
// free text that must stay well-formed XML, and units definitions built from the IR's
// Units (SI dimensions and a factor); one copy keeps the two formats consistent.
#pragma once

#include <string>
#include <string_view>

#include "model/ir/units.hpp"

namespace hw::model::xml_text {

// The shortest decimal text (up to 17 significant digits) that strtod reads back to `v`
// exactly. Finite values only (callers print NaN and infinity as MathML elements).
std::string number(double v);

// `s` with &, <, >, " and ' escaped, and control characters other than tab and newline
// dropped, for attribute values and element text.
std::string escape(std::string_view s);

// An identifier of [A-Za-z0-9_] not starting with a digit, made from `s` ("uA/cm^2" →
// "uA_per_cm2"); "unnamed" when nothing is left.
std::string identifier(std::string_view s);

// The SI base units of Units::dim, in its order (metre, kilogram, second, ampere, kelvin,
// mole, candela): the names CellML and SBML both use for them.
inline constexpr const char* kBaseUnits[7] = {"metre", "kilogram", "second", "ampere",
                                              "kelvin", "mole", "candela"};

}  // namespace hw::model::xml_text
