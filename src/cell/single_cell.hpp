// Runs one paced cell with a fixed-step integrator (float or double) or CVODE, records a
// trace and computes per-beat biomarkers.
//
// Time on the kernel's side is in the model's units (dt_model = dt_ms / time_to_ms); the
// trace and biomarkers are in ms and mV. Each step n runs with the stimulus switch set by
// StepSchedule::on(n) (see pacing.hpp), and the kernel's constants are recomputed after
// every switch, since the switched stimulus is a "once per cell" quantity.
#pragma once

#include <functional>

#include <iosfwd>
#include <string>
#include <vector>

#include "cell/biomarkers.hpp"
#include "model/emit/cell_maths.hpp"
#include "runtime/cell_kernel.hpp"
#include "cell/cell_setup.hpp"
#include "cell/pacing.hpp"
#include "cell/pacing_response.hpp"

namespace hw::cell {

struct SolverOptions {
  bool cvode = false;                  // else the fixed-step `method`
  Integrator method = Integrator::rl2;
  bool single_precision = false;       // fixed-step only
  // Lookup tables of V, fast intrinsics (model/emit/cell_maths.hpp): a CPU kernel is built so
  // (model::KernelNeeds::cell_maths); the GPU population's printed kernel reads this.
  model::CellMaths cell_maths;
  double dt_ms = 0.01;                 // step (fixed-step) or sampling interval (CVODE)
  double rtol = 1e-8, atol = 1e-10;    // CVODE
  double max_step_ms = 0.0;            // CVODE; 0 = no limit
};

std::string solver_name(const SolverOptions& s);  // "rl2", "rk4 (float)", "cvode"

struct TraceOptions {
  bool record = true;
  double interval_ms = 1.0;  // rounded to a whole number of dt
  bool algebraics = false;
};

// Row-major table: columns "t", "V", then the states, then algebraics if asked.
struct Trace {
  std::vector<std::string> columns;
  std::vector<double> data;
  std::size_t rows() const { return columns.empty() ? 0 : data.size() / columns.size(); }
  double at(std::size_t row, std::size_t col) const { return data[row * columns.size() + col]; }
};

// What a run does besides integrating: stop once steady (cell/steady_state.hpp).
struct PacingControl {
  double steady_tolerance = 0;  // > 0: stop after the first beat whose state change is below it
};

struct SingleCellResult {
  Trace trace;
  std::vector<BeatBiomarkers> beats;
  std::vector<double> final_states;  // model units; at the stop when the run stopped steady
  long steps = 0;                    // integrator steps (CVODE: internal steps)
  std::vector<double> beat_changes;  // per beat: relative state change over it (steady_state.hpp)
  int steady_beat = 0;               // the first beat below PacingControl's tolerance; 0: none
  PacingResponse response;           // upstrokes vs stimuli in the last beats (pacing_response.hpp)
  // Ended early by the stop check: `beats` holds only the beats that were finished (the
  // next one had begun), the trace runs to t_stopped_ms.
  bool stopped = false;
  double t_stopped_ms = 0;
};

// Asked between steps of a long study whether to end it early (Ctrl-C: the CLI passes
// io::stop_requested); empty: never. Runners poll it every so often (a thousand steps,
// a cell chunk, a row) and return what was finished.
using StopCheck = std::function<bool()>;

// A fixed-step run whose state stopped being finite: what diverged, when, and from what.
class DivergenceError : public Error {
 public:
  DivergenceError(const std::string& msg, double t, std::string state_name)
      : Error(msg), time_ms(t), state(std::move(state_name)) {}
  double time_ms;     // end of the step that failed
  std::string state;  // the state that went first (see run_single_cell)
};

// Fixed-step runs check every state after every step; the first step that leaves one not
// finite throws DivergenceError naming, among the states that went, the one that moved
// fastest relative to its value just before (its value, rate and |∂f/∂y|·dt), the stiffest
// state at that point, and the fix to try.
SingleCellResult run_single_cell(const CellKernel& kernel, const CellSetup& setup,
                                 const StimulusTrain& train, const SolverOptions& solver,
                                 const TraceOptions& trace = {}, const PacingControl& control = {},
                                 const StopCheck& stop = {});

// CSV with a header line; numbers in shortest round-trip form.
void write_trace_csv(const Trace& trace, std::ostream& out);
void write_trace_csv(const Trace& trace, const std::string& path);

}  // namespace hw::cell
