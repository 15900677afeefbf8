// Pieces shared by the CLI's commands: the options every simulation command takes, and
// turning them into a kernel, a setup and a stimulus train through the library.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "runtime/cell_kernel.hpp"
#include "cell/cell_setup.hpp"
#include "cell/pacing.hpp"
#include "cell/single_cell.hpp"
#include "model/load.hpp"
#include "run/cell_run.hpp"

namespace hw::cli {

// What a subcommand runs once the command line parsed; returns the exit code.
using Action = std::function<int()>;

// The model used when `heartwave cell` gets no FILE (the README's main job).
std::string default_model();

struct RoleFlags {
  std::optional<std::string> voltage, stimulus, stim_amp_param, stim_dur_param,
      stim_period_param, stim_start_param, calcium, capacitance;
  void add_to(CLI::App& app);
  model::RoleOverrides overrides() const;
};

struct SimFlags {
  std::string file;
  std::string integrator = "rl2";
  double dt = 0.01;
  double bcl = 1000;
  int beats = 3;
  std::optional<double> stim_amplitude, stim_duration;
  double stim_start = 0;
  std::vector<std::string> params;
  std::string precision = "double";
  std::string cell_maths = "exact";  // exact | tables | fast | tables+fast
  std::string kernel = "auto";
  double rtol = 1e-8, atol = 1e-10;
  bool model_stimulus = false;
  std::string initial_state;  // --initial-state FILE (run/state_file.hpp)
  RoleFlags roles;

  void add_to(CLI::App& app, bool allow_cvode);
};

// The flags as the library's options, the model loaded and ready to run (run/cell_run.hpp).
// cpu_kernel = false: no cpu kernel is built (a run on the GPU prints its own).
run::PreparedCell prepare(const SimFlags& f, bool cpu_kernel = true);
run::CellRunOptions run_options(const SimFlags& f);  // what prepare() passes to the library

// Prints the warnings of --initial-state (stderr), each prefixed with `command`.
void print_state_warnings(const run::PreparedCell& p, const std::string& command);

// Validators with short messages (CLI11's PositiveNumber prints the whole double range).
extern const CLI::Validator kPositive;
extern const CLI::Validator kNonNegative;
extern const CLI::Validator kAssignment;  // NAME=VALUE, VALUE a finite number
extern const CLI::Validator kRangeWithCount;  // NAME=LO:HI:N (sweep --grid)
extern const CLI::Validator kRange;           // NAME=LO:HI (sweep --random, --lhs)

// --cell-maths (exact, tables, fast, tables+fast; model/emit/cell_maths.hpp) on `cmd`, with
// help that says what each does and where its bounds are; `what` names where it applies.
CLI::Option* add_cell_maths_option(CLI::App* cmd, std::string& value, const std::string& what);
// The option's value (checked by add_cell_maths_option's validator).
model::CellMaths cell_maths_of(const std::string& value);

// A time in ms with at most as many decimals as dt has ("390.34", not "390.34000000000003").
std::string format_ms(double t_ms, double dt_ms);

// Refuses an output path before any work is done, rather than after: a folder, or a file in
// a folder that does not exist or cannot be written. InputError at the path (exit 1, as
// for any file that cannot be read or written), naming `option`.
void check_writable(const std::string& path, const std::string& option);

// --verbose (any command): every warning, not one per kind.
extern bool g_verbose;

// Prints the warnings from loading (stderr): the first of each kind (Diagnostic::code)
// with a count of the others, or all of them with --verbose.
void print_notes(const std::vector<Diagnostic>& notes);

}  // namespace hw::cli
