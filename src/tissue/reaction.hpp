// Everything a monodomain engine needs, checked and resolved from a TissueCase: geometry,
// conductivity, and per model region ("part") its cells, kernel, parameters, stimuli and
// initial conditions.
//
// Why apart from the engines: validation (every InputError names its key's SourceLoc) and
// the mapping of regions to compact cell lists are the same for every backend; the
// engines (simulation.cpp) only own arrays of numbers. estimate_memory and
// stable_dt_limit read the same set-up so they agree with what a run does.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/cell_kernel.hpp"
#include "cell/cell_setup.hpp"
#include "model/ir/model.hpp"
#include "tissue/case.hpp"
#include "mesh/conductivity.hpp"
#include "tissue/diffusion.hpp"
#include "mesh/row_layout.hpp"
#include "tissue/stimuli.hpp"

namespace hw::tissue {

// The cells one model runs on and its numbers.
struct Part {
  std::string model;
  SourceLoc loc;
  std::shared_ptr<const model::Model> analysed;  // the IR each engine builds its kernel from
  std::shared_ptr<cell::CellKernel> kernel;      // the cpu kernel (null when not asked for)
  std::string how;  // which kernel and why (make_kernel)
  cell::CellSetup setup;
  int ns = 0, np = 0, kv = 0;        // states, parameters, voltage state index
  double v2mV = 1, t2ms = 1;         // model units → mV, ms
  bool identity = false;             // the part is the whole grid: cells not stored
  std::vector<std::uint32_t> cells;  // grid indices, ascending (empty when identity)
  std::size_t n = 0;
  std::vector<std::uint32_t> row_start;  // (ny·nz + 1) compact index of each row's first cell
  std::vector<double> params;            // uniform values (region params and scales applied)
  bool per_cell = false;                 // gradients: np·n values in pcell, parameter-major
  std::vector<double> pcell;
  std::vector<std::vector<std::uint32_t>> stim;  // per case stimulus: compact indices
  std::vector<double> stim_rate;                 // per stimulus: amplitude/(χCm)/v2mV

  std::size_t grid_index(std::size_t i) const { return identity ? i : cells[i]; }
  std::size_t row_begin(std::size_t r, int nx) const {
    return identity ? r * std::size_t(nx) : row_start[r];
  }
};

// An initial condition resolved to cells: the voltage (grid indices, mV) or state k of
// part `part` (compact indices, model units).
struct ResolvedInitial {
  int part = -1;  // −1: the voltage
  int state = -1;
  double value = 0;
  std::vector<std::uint32_t> cells;
};

struct SimGeometry {
  Grid grid;
  Mask mask;
  Field<std::int16_t> labels;
  Field<float> phase;  // φ when geometry.phase_field (dropped once the set-up has used it)
};

struct SimSetup {
  TissueCase tcase;
  SimGeometry geo;
  Conductivity sigma;  // φσ when the case has a phase field
  // Phase-field no-flux boundary (docs/tissue.md): φ on tissue cells, 0 elsewhere; empty
  // when the case has none. Explicit diffusion then is V += α·(L_{φσ} V)/φ.
  Field<double> phi;
  StencilOrder order = StencilOrder::second;
  double chi = 0, cm = 0;
  TimeSpec time;
  cell::Integrator integrator = cell::Integrator::rl1;
  std::string integrator_note;  // time.integrator = "auto": what it chose and why
  std::vector<Part> parts;
  std::vector<StimulusSchedule> schedules;
  std::vector<ResolvedInitial> initial;  // applied by the engine, then dropped
  std::size_t tissue_cells = 0;
};

// Validates c and resolves it (loads the models). InputError at the offending key.
// cpu_kernels: also build each part's CellKernel (built-in, JIT C++ or interpreter) for the
// cpu and reference engines; the CUDA engine prints its own kernels from Part::analysed.
SimSetup make_sim_setup(const TissueCase& c, bool cpu_kernels = true);

// The run's diffusion operator set-up alone (grid, mask, σ or φσ, order, the row layout),
// without loading any model: for outputs that apply L V themselves (the pseudo-ECG).
DiffusionSetup make_case_diffusion(const TissueCase& c);

// The diffusion operator's set-up of a resolved case (σ or φσ, mask, order), its fields in
// `layout` (empty: the box), for the engines that build a DiffusionOperator.
DiffusionSetup diffusion_setup(const SimSetup& s, RowLayout layout = {});

// See stable_dt_limit in simulation.hpp (estimate_memory is defined with these too).
double sim_stable_dt(const TissueCase& c);

}  // namespace hw::tissue
