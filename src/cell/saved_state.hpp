// A paced cell's state kept for later runs: `--save-state FILE` writes one, `--initial-state
// FILE`, Python's initial_state="FILE" and a case's [[model]] initial_state = "FILE" start
// from one (the file itself: run/state_file.hpp).
//
// Why the model's identity and the pacing travel with the states: a state is only a steady
// state of one model paced one way. Starting another model from it is refused (its states
// would be another model's); the same model edited since (another fingerprint), or paced at
// another BCL, with other parameters or another stimulus, is allowed with a warning, since
// starting near a steady state and pacing on is exactly how modellers reach a new one.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cell/cell_setup.hpp"
#include "model/ir/model.hpp"

namespace hw::cell {

struct SavedState {
  std::string source;        // the file it was read from, for messages ("" if none)
  std::string model;         // the model's name (CellSetup::model_name)
  std::string model_sha256;  // model_fingerprint of the model as read; "" unknown
  std::vector<std::pair<std::string, double>> states;  // name, value (model units), model order
  // How it was paced.
  double bcl_ms = 0;
  int beats = 0;              // beats run
  double stim_duration_ms = 0;
  double stim_amplitude = 0;  // the stimulus while on, model units (CellSetup::stimulus_value)
  std::vector<std::pair<std::string, double>> params;  // the parameters set for the run (absolute)
  double tolerance = 0;       // --until-steady's TOL; 0 when not asked
  int steady_beat = 0;        // the first steady beat; 0 when not shown steady
  double last_change = 0;     // the last beat's relative state change (steady_state.hpp)
};

// SHA-256 of the model as read (its .hwm text): the same equations and defaults give the
// same fingerprint wherever the model was loaded from. "" if the model cannot be printed.
std::string model_fingerprint(const model::Model& source);

// The state at the end of a run of `setup` (final_states, in the model's order) with its
// identity; the pacing fields are the caller's to fill.
SavedState make_saved_state(const CellSetup& setup, const std::vector<double>& final_states,
                            const std::string& fingerprint);

// Sets every state of setup.initial_states from `s`. InputError at s.source when `s` is
// another model's or lacks one of the model's states (naming them). Returns warnings: the
// model changed since (fingerprint differs; `fingerprint` "" skips the check), states the
// model does not have.
std::vector<std::string> apply_saved_state(CellSetup& setup, const SavedState& s, const std::string& fingerprint);

// Warnings for a run paced differently from how `s` was reached: another BCL, stimulus or
// parameter values (`setup` holds the run's parameters, `overrides` those it set; bcl_ms <= 0
// skips the BCL). One warning naming every difference, or none.
std::vector<std::string> pacing_differences(const SavedState& s, const CellSetup& setup,
                                            const std::vector<std::pair<std::string, double>>& overrides,
                                            double bcl_ms, double stim_duration_ms);

}  // namespace hw::cell
