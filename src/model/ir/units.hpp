// Physical units as a product of SI base units with a scale and an offset.
//
// A quantity q in unit U has the SI value  (q + offset) * factor  (offset is non-zero only
// for celsius/fahrenheit-like units). Dimensions are integer-or-fractional exponents of
// the seven SI base units (plus "dimensionless"). CellML units, native-model units and
// the CLI's ms / mV presentation all go through this one type.
#pragma once

#include <array>
#include <optional>
#include <string>

namespace hw::model {

struct Units {
  // Exponents of: metre, kilogram, second, ampere, kelvin, mole, candela.
  std::array<double, 7> dim{};
  double factor = 1.0;
  double offset = 0.0;

  bool dimensionless() const;
  bool same_dimension(const Units& other) const;
  Units operator*(const Units& o) const;
  Units operator/(const Units& o) const;
  Units pow(double e) const;
  // The SI-dimension signature as text, e.g. "m^2.kg.s^-3.A^-1" ("1" when dimensionless).
  std::string dimension_string() const;
};

// Built-in units of CellML 1.x/2.0 (ampere, farad, ..., volt, litre, dimensionless) and
// prefixed forms ("millivolt", "mV" style short names are handled by parse_units_expr).
std::optional<Units> builtin_units(const std::string& name);

// Multiplier converting a value in `from` to `to` (offset-free units only):
//   value_in_to = value_in_from * conversion_factor(from, to)
// Returns nullopt when the dimensions differ.
std::optional<double> conversion_factor(const Units& from, const Units& to);

// Parses a compact unit expression used by the native model language and the CLI:
// "mV", "ms", "uA/cm^2", "mmol/L", "mS/uF", "1/ms", "dimensionless". Throws hw::Error
// with a message on unknown units.
Units parse_units_expr(const std::string& text);

// A compact expression for `u` that parse_units_expr reads back to the same units: the
// familiar cardiac spelling when one fits ("uA/cm^2", "mS/uF", "mM", "1/ms"), else a
// factor times SI base units ("0.001*m^2*kg*s^-3*A^-1"). The .hwm writer uses it for
// CellML units whose names (e.g. "microA_per_cm2") the compact syntax does not know.
std::string format_units(const Units& u);

}  // namespace hw::model
