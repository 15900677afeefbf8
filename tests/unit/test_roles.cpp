// Role detection: overrides, oxmeta terms, name rules and the unit factors to ms / mV.
#include <gtest/gtest.h>

#include "model/analysis/roles.hpp"
#include "model/frontend/cellml/cellml.hpp"

using namespace hw::model;

namespace {

Model tiny(const std::string& vname, const char* vunits, const char* tunits,
           const std::string& ontology = "") {
  Model m;
  State v;
  v.name = vname;
  v.units = parse_units_expr(vunits);
  v.ontology = ontology;
  m.states.push_back(v);
  State ca;
  ca.name = "Ca_i";
  ca.units = parse_units_expr("mM");
  m.states.push_back(ca);
  m.derivatives = {m.pool.constant(0), m.pool.constant(0)};
  m.time.name = "t";
  m.time.units = parse_units_expr(tunits);
  for (const char* p : {"stim_amplitude", "stim_duration", "stim_period", "stim_start", "Cm"}) {
    Parameter q;
    q.name = p;
    m.parameters.push_back(q);
  }
  Algebraic i;
  i.name = "membrane__i_Stim";
  i.expr = m.pool.constant(0);
  m.algebraics.push_back(i);
  return m;
}

}  // namespace

TEST(Roles, NameRulesAndUnitFactors) {
  Model m = tiny("Vm", "V", "s");
  detect_roles(m);
  ASSERT_TRUE(m.roles.voltage_state);
  EXPECT_EQ(*m.roles.voltage_state, 0u);
  EXPECT_EQ(m.roles.calcium_state, 1u);
  EXPECT_EQ(m.roles.stimulus_current, 0u);  // "component__i_Stim" matches i_Stim
  EXPECT_EQ(m.roles.stimulus_amplitude, 0u);
  EXPECT_EQ(m.roles.stimulus_duration, 1u);
  EXPECT_EQ(m.roles.stimulus_period, 2u);
  EXPECT_EQ(m.roles.stimulus_start, 3u);
  EXPECT_EQ(m.roles.capacitance, 4u);
  EXPECT_DOUBLE_EQ(m.roles.time_to_ms, 1000.0);
  EXPECT_DOUBLE_EQ(m.roles.voltage_to_mV, 1000.0);
  std::string d = describe_roles(m);
  EXPECT_NE(d.find("voltage: Vm"), std::string::npos) << d;
}

TEST(Roles, DimensionlessModelsHaveUnitFactors) {
  Model m = tiny("u", "dimensionless", "dimensionless");
  detect_roles(m);
  EXPECT_EQ(m.roles.voltage_state, 0u);
  EXPECT_DOUBLE_EQ(m.roles.time_to_ms, 1.0);
  EXPECT_DOUBLE_EQ(m.roles.voltage_to_mV, 1.0);
}

TEST(Roles, OntologyBeatsNames) {
  Model m = tiny("weird_name", "mV", "ms", "membrane_voltage");
  State v;
  v.name = "V";  // a name rule would pick this one
  m.states.push_back(v);
  m.derivatives.push_back(m.pool.constant(0));
  detect_roles(m);
  EXPECT_EQ(m.roles.voltage_state, 0u);
}

TEST(Roles, OverridesWinAndUnknownNamesListTheAlternatives) {
  Model m = tiny("V", "mV", "ms");
  RoleOverrides o;
  o.voltage = "Ca_i";
  detect_roles(m, o);
  EXPECT_EQ(m.roles.voltage_state, 1u);
  o.voltage = "nope";
  try {
    detect_roles(m, o);
    FAIL();
  } catch (const hw::InputError& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("'nope'"), std::string::npos) << w;
    EXPECT_NE(w.find("V, Ca_i"), std::string::npos) << w;
  }
  RoleOverrides p;
  p.stimulus_amplitude = "Cm";
  detect_roles(m, p);
  EXPECT_EQ(m.roles.stimulus_amplitude, 4u);
}

TEST(Roles, UnitsConvertedCellmlModel) {
  // A model in seconds and volts reports the factors the CLI needs.
  std::string xml = R"(<model name="sv" xmlns="http://www.cellml.org/cellml/1.0#"
    xmlns:cellml="http://www.cellml.org/cellml/1.0#">
  <component name="membrane">
    <variable name="time" units="second"/>
    <variable name="V" units="volt" initial_value="-0.08"/>
    <math xmlns="http://www.w3.org/1998/Math/MathML"><apply><eq/>
      <apply><diff/><bvar><ci>time</ci></bvar><ci>V</ci></apply>
      <cn cellml:units="dimensionless">0</cn></apply></math>
  </component></model>)";
  Model m = parse_cellml(xml, "sv.cellml");
  EXPECT_EQ(m.roles.voltage_state, 0u);
  EXPECT_DOUBLE_EQ(m.roles.time_to_ms, 1000.0);
  EXPECT_DOUBLE_EQ(m.roles.voltage_to_mV, 1000.0);
}
