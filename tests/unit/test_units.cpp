// Units: built-ins, prefixes, dimension algebra, conversions and the compact parser.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "model/ir/units.hpp"

using namespace hw::model;

TEST(Units, BuiltinsAndPrefixes) {
  auto mv = builtin_units("millivolt");
  ASSERT_TRUE(mv);
  EXPECT_TRUE(mv->same_dimension(*builtin_units("volt")));
  EXPECT_DOUBLE_EQ(mv->factor, 1e-3);
  for (const char* n : {"ampere", "becquerel", "candela", "celsius", "coulomb", "dimensionless",
                        "farad", "gram", "gray", "henry", "hertz", "joule", "katal", "kelvin",
                        "kilogram", "liter", "litre", "lumen", "lux", "metre", "meter", "mole",
                        "newton", "ohm", "pascal", "radian", "second", "siemens", "sievert",
                        "steradian", "tesla", "volt", "watt", "weber"})
    EXPECT_TRUE(builtin_units(n)) << n;
  EXPECT_FALSE(builtin_units("furlong"));
  EXPECT_DOUBLE_EQ(builtin_units("microlitre")->factor, 1e-9);
  EXPECT_DOUBLE_EQ(builtin_units("kilogram")->factor, builtin_units("kilogram")->factor);
  EXPECT_DOUBLE_EQ(builtin_units("gram")->factor, 1e-3);
}

TEST(Units, DimensionAlgebra) {
  Units v = *builtin_units("volt"), a = *builtin_units("ampere"), ohm = *builtin_units("ohm");
  EXPECT_TRUE((v / a).same_dimension(ohm));
  Units f = *builtin_units("farad"), s = *builtin_units("second");
  EXPECT_TRUE((f * ohm).same_dimension(s));  // RC is a time
  EXPECT_TRUE((s / s).dimensionless());
  EXPECT_EQ(s.pow(-1).dimension_string(), "s^-1");
  EXPECT_EQ(Units{}.dimension_string(), "1");
  EXPECT_EQ(builtin_units("newton")->dimension_string(), "m.kg.s^-2");
}

TEST(Units, ConversionFactor) {
  auto ms = parse_units_expr("ms"), s = parse_units_expr("s");
  EXPECT_DOUBLE_EQ(*conversion_factor(s, ms), 1000.0);
  EXPECT_DOUBLE_EQ(*conversion_factor(parse_units_expr("V"), parse_units_expr("mV")), 1000.0);
  EXPECT_FALSE(conversion_factor(s, parse_units_expr("mV")));
  // mS/uF is 1/ms.
  EXPECT_NEAR(*conversion_factor(parse_units_expr("mS/uF"), parse_units_expr("1/ms")), 1.0, 1e-12);
  // uA/cm^2 to A/m^2.
  EXPECT_NEAR(*conversion_factor(parse_units_expr("uA/cm^2"), parse_units_expr("A/m^2")), 1e-2,
              1e-15);
}

TEST(Units, ParseCompactExpressions) {
  EXPECT_TRUE(parse_units_expr("dimensionless").dimensionless());
  Units mm = parse_units_expr("mmol/L");
  EXPECT_TRUE(mm.same_dimension(parse_units_expr("mM")));
  EXPECT_NEAR(mm.factor, parse_units_expr("mM").factor, 1e-12);
  EXPECT_NEAR(mm.factor, 1.0, 1e-12);  // mmol/L = mol/m^3
  Units per_ms = parse_units_expr("1/ms");
  EXPECT_DOUBLE_EQ(per_ms.factor, 1000.0);
  EXPECT_DOUBLE_EQ(per_ms.dim[2], -1.0);
  EXPECT_DOUBLE_EQ(parse_units_expr("uA/cm^2").dim[0], -2.0);
  EXPECT_DOUBLE_EQ(parse_units_expr("mol").factor, 1.0);
  EXPECT_DOUBLE_EQ(parse_units_expr("millivolt").factor, 1e-3);
  EXPECT_DOUBLE_EQ(parse_units_expr("(mV*ms)^2").factor, 1e-12);
}

TEST(Units, ParseErrors) {
  EXPECT_THROW(parse_units_expr("furlong"), hw::Error);
  EXPECT_THROW(parse_units_expr(""), hw::Error);
  EXPECT_THROW(parse_units_expr("mV/"), hw::Error);
  EXPECT_THROW(parse_units_expr("(mV"), hw::Error);
  EXPECT_THROW(parse_units_expr("mV^"), hw::Error);
}

TEST(Units, CelsiusOffset) {
  Units c = *builtin_units("celsius");
  EXPECT_DOUBLE_EQ(c.offset, 273.15);
  EXPECT_TRUE(c.same_dimension(*builtin_units("kelvin")));
}
