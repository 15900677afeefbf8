// Names and units of a run's fields from its models; see variable_units.hpp.
#include "tissue/variable_units.hpp"

#include "tissue/reaction.hpp"

namespace hw::tissue {
namespace {

// A symbol's units as the outputs write them: the familiar spelling, "dimensionless" for
// pure numbers and for a state with no units at all (the native language's bare states).
std::string units_text(const model::Symbol& s) {
  if (s.units) return model::format_units(*s.units);
  return s.units_name.empty() ? "dimensionless" : s.units_name;
}

}  // namespace

VariableUnits variable_units(const SimSetup& s, const std::string& variable) {
  for (const Part& p : s.parts) {
    if (!p.analysed) continue;
    const model::Model& m = *p.analysed;
    if (variable == "V" && m.roles.voltage_state) {
      const model::State& v = m.states[*m.roles.voltage_state];
      // The run converts a potential in volts (any prefix) to mV; anything else it leaves.
      const bool voltage = v.units && v.units->same_dimension(*model::builtin_units("volt"));
      return {voltage ? "V" : v.name, voltage ? "mV" : units_text(v)};
    }
    if (const auto i = m.find_state(variable)) return {variable, units_text(m.states[*i])};
  }
  return {variable, ""};
}

}  // namespace hw::tissue
