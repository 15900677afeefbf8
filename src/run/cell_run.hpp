// Options of a paced-cell study (one cell, a population, S1-S2) turned into what the
// runners need: the loaded model, a cell kernel, the setup with parameters applied, the
// solver (with `auto`'s choice made) and the stimulus train.
//
// Why in the library: the CLI's `cell`, `sweep` and `restitution` and the Python package
// take the same options and must make the same choices (stimulus defaults, the refusal of
// an unusable stimulus, `auto`'s probe), so the choice is written once, here.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/cell_kernel.hpp"
#include "cell/cell_setup.hpp"
#include "cell/pacing.hpp"
#include "cell/saved_state.hpp"
#include "cell/single_cell.hpp"
#include "model/load.hpp"

namespace hw::run {

struct CellRunOptions {
  std::string model;                 // a .cellml/.xml/.hwm file or a built-in's name
  std::string integrator = "rl2";    // an integrator's name, "auto" or "cvode"
  double dt_ms = 0.01;
  double bcl_ms = 1000;
  int beats = 3;
  std::optional<double> stim_amplitude;    // magnitude, model units; default the model's
  std::optional<double> stim_duration_ms;  // default the model's
  double stim_start_ms = 0;
  std::vector<std::pair<std::string, double>> params;  // absolute values, in order
  bool single_precision = false;
  model::CellMaths cell_maths;  // lookup tables of V, fast intrinsics (model/emit/cell_maths.hpp)
  std::string kernel = "auto";  // auto, interpreter, compiled
  double rtol = 1e-8, atol = 1e-10;
  bool model_stimulus = false;  // keep the model's own protocol
  model::RoleOverrides roles;
  // A state file to start from (run/state_file.hpp); "" = the model's initial values.
  std::string initial_state;
  // How the messages name the stimulus options ("--stim-amplitude" on the command line,
  // "stim_amplitude=" in Python).
  std::string amplitude_option = "--stim-amplitude", duration_option = "--stim-duration";
};

// A model loaded and ready to run with the options applied.
struct PreparedCell {
  model::LoadedModel loaded;
  std::unique_ptr<cell::CellKernel> kernel;
  std::string how;  // which kernel runs
  cell::CellSetup setup;
  cell::SolverOptions solver;
  cell::StimulusTrain train;
  double stim_duration_ms = 1;
  std::string integrator_note;  // what `auto` chose and why ("" otherwise)
  // From CellRunOptions::initial_state: the model changed since, the pacing differs, ...
  std::vector<std::string> state_warnings;
};

// The integrator called `name` (not auto or cvode); InputError listing them otherwise.
cell::Integrator parse_integrator(const std::string& name);

// cpu_kernel = false: no cpu kernel is built (a run on the GPU prints its own from
// loaded.analysed; a user's model then skips the C++ compile), kernel stays null.
// InputError for an unknown model, integrator or parameter, and for a stimulus that
// cannot be used without an amplitude or duration given.
// With o.initial_state, every state starts from that file: InputError when it is another
// model's or lacks states (cell/saved_state.hpp), warnings in state_warnings.
PreparedCell prepare_cell(const CellRunOptions& o, bool cpu_kernel = true);

// The state `final_states` reached by `beats` beats of the run `p` (paced as `o` says),
// with the model's identity and that pacing, for write_state_file; the steady-state fields
// are the caller's.
cell::SavedState saved_state(const PreparedCell& p, const CellRunOptions& o, const std::vector<double>& final_states,
                             int beats);

}  // namespace hw::run
