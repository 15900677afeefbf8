// What a runner needs to know about a compiled cell model besides its kernel: names,
// default values, which state is the voltage, how to switch the stimulus, and the
// conversions to ms and mV.
//
// Why separate from the kernel: a CellKernel is pure numerics (it may be generated code
// with no names at all); the setup is read from the analysed Model once and then the
// runners never touch the IR. Parameter overrides are checked here, by name.
#pragma once

#include <string>
#include <vector>

#include "cell/pacing.hpp"
#include "model/ir/model.hpp"

namespace hw::cell {

struct CellSetup {
  std::string model_name;
  std::vector<std::string> state_names, param_names, algebraic_names;
  std::vector<double> initial_states, params;
  int voltage = -1;   // state index
  int calcium = -1;   // state index or -1
  int stim_on = -1;   // parameter index or -1 (the model keeps its own stimulus)
  int stim_amplitude = -1;
  model::StimulusInfo stimulus;
  double time_to_ms = 1.0, voltage_to_mV = 1.0;

  int param_index(const std::string& name) const;  // -1 when absent
  // Sets a parameter by name; InputError naming close candidates when unknown.
  void set_param(const std::string& name, double value);
  // Sets the stimulus strength as a magnitude: the stimulus current while on becomes
  // |x| with the sign of the model's own stimulus (additive stimulus: +|x| on dV/dt).
  void set_stimulus_magnitude(double x);
  // The stimulus value while on, in the model's units (signed); NaN if unknown.
  double stimulus_value() const;
};

// Reads names, defaults and roles from the analysed model; `info` is what prepare_pacing
// returned (Kind::none when the model keeps its own stimulus).
CellSetup make_cell_setup(const model::Model& analysed, const model::StimulusInfo& info);

}  // namespace hw::cell
