// What a field of a tissue run is, for the labels of its outputs: the colour bar of a
// picture ("V (mV)", "E (dimensionless)") and the units in the traces' CSV headers.
//
// Why from the models: "V" is each model's membrane potential, in mV when the model gives
// it in a unit of voltage (the run converts it), but Karma, FitzHugh-Nagumo or
// Mitchell-Schaeffer potentials are dimensionless and must not be labelled mV.
#pragma once

#include <string>

namespace hw::tissue {

struct SimSetup;  // tissue/reaction.hpp

struct VariableUnits {
  std::string name;   // the model's own name of the variable ("V", "E", "Ca_i")
  std::string units;  // "mV", "mM", "dimensionless", … ; empty when the model does not say
  // "E (dimensionless)", "V (mV)", or the name alone when the units are unknown.
  std::string label() const { return units.empty() ? name : name + " (" + units + ")"; }
};

// variable: "V" (the membrane potential) or a state's name, as the case's output names it.
// From the first model region that has it; {variable, ""} when none has.
VariableUnits variable_units(const SimSetup& s, const std::string& variable);

}  // namespace hw::tissue
