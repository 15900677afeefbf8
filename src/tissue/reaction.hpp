// Everything a monodomain engine needs, checked and resolved from a TissueCase: geometry,
// conductivity, and per model region ("part") its cells, kernel, parameters, stimuli and
// initial conditions.
//
// Why apart from the engines: validation (every InputError names its key's SourceLoc) and
// the mapping of regions to compact cell lists are the same for every backend; the
// engines (simulation.cpp) only own arrays of numbers.
//
// Why in stages on one SimSetup: a run is set up once. `heartwave run` plans first (the
// memory a case needs, the explicit dt limit) and then runs; both read the same set-up, so
// the geometry is built once, each model loaded once and dt checked once. The stages, each
// doing only what the ones before have not done:
//   prepare_setup     the case's numbers (dt once), the geometry (built once: mask, labels,
//                     φ, per-voxel fibres), each distinct model loaded once
//   estimate_memory   reads that: nothing box-sized beyond the geometry is made before a
//                     case is known to fit
//   prepare_diffusion σ (or φσ), the explicit dt limit and its check (the one place)
//   resolve_setup     parts, gradients, stimuli, initial conditions, cpu kernels, auto integrator
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "formats/unstructured_mesh.hpp"
#include "runtime/cell_kernel.hpp"
#include "cell/cell_setup.hpp"
#include "model/ir/model.hpp"
#include "model/load.hpp"
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
  // Per parameter: its value where every cell has the same one (what a kernel may compile in
  // as a constant), else nullopt. Set with pcell and kept after the simulation frees pcell,
  // for a kernel compiled again mid-run (the GPU's, at the first stimulus added live).
  std::vector<std::optional<double>> uniform;

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
  // Ventricular coordinates (0 endo … 1 epi, 0 apex … 1 base) when regions or gradients
  // use them, and the long axis they took (mesh/ventricular_coordinates.hpp); else empty.
  Field<float> transmural, apex_base;
  std::string long_axis_note;
  // geometry kind mesh: the mesh (mm, in the frame of grid.origin) and what voxelising it
  // found, so outputs can write the run's maps back onto its nodes; null otherwise.
  std::shared_ptr<const io::UnstructuredMesh> mesh;
  std::string mesh_note;
};

// How far a SimSetup has got (the stages above, in order).
enum class SetupStage { none, prepared, diffusion, resolved };

struct SimSetup {
  SetupStage stage = SetupStage::none;
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
  std::vector<std::string> state_notes;  // [[model]] initial_state: where each came from, warnings
  std::vector<Part> parts;
  StimulusSet stimuli;  // the case's, then any added while running (Simulation::add_stimulus)
  std::vector<ResolvedInitial> initial;  // applied by the engine, then dropped
  std::size_t tissue_cells = 0;
  // Explicit diffusion's dt limit in ms (infinity: no bound), set by prepare_diffusion for
  // forward Euler; 0 for the implicit schemes (no limit, not computed).
  double stable_dt = 0;
  // Per-voxel fibres from the geometry, held from prepare_setup until σ is made.
  std::optional<FibreField> fibres;
  // Each distinct model of the case, by resolved path, loaded once (with the default load
  // options: the tissue set-up uses no others) and shared by every region naming it.
  std::map<std::string, std::shared_ptr<const model::LoadedModel>> models;
};

// The stages (see the top of this file); each runs the stages before it that s has not
// run, and does nothing when s is already past it. InputError at the offending key.
SimSetup prepare_setup(const TissueCase& c);
// The same, every problem added to `problems` rather than thrown (`run --check` lists them
// all); the stage stays `none` when there was one, else what loaded is kept (models).
SimSetup prepare_setup(const TissueCase& c, DiagnosticSink& problems);
void prepare_diffusion(SimSetup& s);
// cpu_kernels: also build each part's CellKernel (built-in, JIT C++ or interpreter) for the
// cpu and reference engines; the CUDA engine prints its own kernels from Part::analysed.
void resolve_setup(SimSetup& s, bool cpu_kernels = true);

// Stimulus st resolved on set-up s (resolved: its parts made): its schedule, its cells in
// each part, its rate per part. InputError at st's key for bad numbers or a region with no
// tissue cell; `what` names it in messages ("stimulus[2]").
ResolvedStimulus resolve_stimulus(const SimSetup& s, const Stimulus& st, const std::string& what);
// The same on cells already resolved (per part, compact indices), as a checkpoint stores
// them: the numbers checked, each cell inside its part, the rates. InputError otherwise.
ResolvedStimulus stimulus_on_cells(const SimSetup& s, const Stimulus& st,
                                   std::vector<std::vector<std::uint32_t>> cells, const std::string& what);

// All the stages at once: c validated and resolved.
SimSetup make_sim_setup(const TissueCase& c, bool cpu_kernels = true);

// The run's diffusion operator set-up alone (grid, mask, σ or φσ, order, the row layout),
// without loading any model: for outputs that apply L V themselves (the pseudo-ECG).
DiffusionSetup make_case_diffusion(const TissueCase& c);

// The diffusion operator's set-up of a resolved case (σ or φσ, mask, order), its fields in
// `layout` (empty: the box), for the engines that build a DiffusionOperator.
DiffusionSetup diffusion_setup(const SimSetup& s, RowLayout layout = {});

// See stable_dt_limit in simulation.hpp (estimate_memory is defined with these too).
double sim_stable_dt(const TissueCase& c);

struct MemoryEstimate;  // tissue/simulation.hpp
// The memory a run of a prepared set-up (prepare_setup) will hold: reads its geometry and
// models, builds nothing.
MemoryEstimate estimate_memory(const SimSetup& prepared);

}  // namespace hw::tissue
