// Roles: which symbols are the membrane voltage, the stimulus current and its protocol
// parameters, intracellular calcium and the membrane capacitance.
//
// Why: the CLI presents every model in ms and mV and replaces the model's own stimulus
// protocol; it must find those symbols whatever the model calls them. Order of
// precedence: explicit overrides (flags), then oxmeta ontology terms (Symbol::ontology),
// then documented name rules (docs/cellml.md). A role nothing matches stays empty.
#pragma once

#include <optional>
#include <string>

#include "model/ir/model.hpp"

namespace hw::model {

struct RoleOverrides {
  std::optional<std::string> voltage, stimulus_current, stimulus_amplitude, stimulus_duration,
      stimulus_period, stimulus_start, calcium, capacitance;
};

// Fills m.roles (including time_to_ms and voltage_to_mV from the symbols' units).
// An override naming no symbol of the right kind is an InputError listing the names
// that exist.
void detect_roles(Model& m, const RoleOverrides& overrides = {});

// One line per role found, e.g. "voltage: V (state, oxmeta membrane_voltage, mV; x1)".
std::string describe_roles(const Model& m);

}  // namespace hw::model
