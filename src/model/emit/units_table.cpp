// See units_table.hpp.
#include "model/emit/units_table.hpp"

#include <cmath>

#include "model/emit/xml_text.hpp"

namespace hw::model {

namespace {

bool same_units(const Units& a, const Units& b) {
  return a.same_dimension(b) && std::abs(a.factor - b.factor) <= 1e-12 * std::abs(b.factor);
}

}  // namespace

std::string UnitsTable::name_for(const Symbol& s) {
  if (!s.units) return "";
  return name_for(*s.units, s.units_name.empty() ? "units" : s.units_name);
}

std::string UnitsTable::name_for(const Units& u, const std::string& preferred) {
  std::string base = xml_text::identifier(preferred);
  if (predefined_.count(base)) {
    if (auto b = builtin_units(base); b && same_units(*b, u)) return base;
    base = "u_" + base;
  }
  std::string name = base;
  for (int i = 2;; ++i) {
    bool taken = false;
    for (const auto& d : defs_) {
      if (d.name != name) continue;
      if (same_units(d.units, u)) return name;
      taken = true;
    }
    if (!taken) break;
    name = base + "_" + std::to_string(i);
  }
  Units clean = u;
  clean.offset = 0.0;
  defs_.push_back({name, clean});
  return name;
}

std::set<std::string> cellml2_predefined_units() {
  return {"ampere", "becquerel", "candela", "coulomb", "dimensionless", "farad", "gram",
          "gray", "henry", "hertz", "joule", "katal", "kelvin", "kilogram", "litre", "lumen",
          "lux", "metre", "mole", "newton", "ohm", "pascal", "radian", "second", "siemens",
          "sievert", "steradian", "tesla", "volt", "watt", "weber"};
}

std::set<std::string> sbml_predefined_units() {
  auto s = cellml2_predefined_units();
  s.insert({"avogadro", "item", "celsius", "meter", "liter"});
  return s;
}

}  // namespace hw::model
