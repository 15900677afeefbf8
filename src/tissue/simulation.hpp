// The monodomain tissue simulation: cell models coupled by diffusion, one interface for
// every backend.
//
//   χ (Cm ∂V/∂t + I_ion) = ∇·(σ∇V) + I_stim          (mV, ms, mm; case.hpp units)
//
// Why one class with a backend option: the CLI, the outputs, checkpoints and benchmarks
// talk to Simulation only; Backend::reference (plain sequential double loops, the oracle),
// Backend::cpu (OpenMP, float or double, diffusion and reaction fused in one pass) and
// Backend::cuda (tissue/cuda/, on a gpu::Device) sit behind it (tissue/engine.hpp).
// docs/tissue.md has the splitting, units, storage layout and NaN policy.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "formats/unstructured_mesh.hpp"
#include "tissue/case.hpp"
#include "tissue/diffusion.hpp"
#include "mesh/grid.hpp"
#include "tissue/variable_units.hpp"

namespace hw::comm {
class Communicator;
}

namespace hw::tissue {

class Snapshot;  // tissue/sinks.hpp: the observers the run attaches
class ActivationSink;
class EcgSink;
class ProbeSink;
class FrameSink;
struct ActivationMaps;
struct SimSetup;  // tissue/reaction.hpp

struct SimulationOptions {
  Backend backend = Backend::cpu;
  int threads = 0;            // cpu: the most threads (0: the cores this process may use)
  bool adapt_threads = true;  // cpu: fewer threads while the machine is busy (parallel/governor.hpp)
  int device = 0;             // cuda: the GPU (its ordinal as the driver counts them)
  // The ranks to split the run over (docs/parallel.md); null: comm::world(), which is one
  // rank unless an MPI launcher started the process.
  comm::Communicator* comm = nullptr;
};

// A NaN or infinity appeared in a step. The Simulation keeps the last good V, time and
// step count (see docs/tissue.md, "NaN policy").
class NumericalError : public hw::Error {
 public:
  NumericalError(const std::string& msg, double t, std::array<int, 3> c, std::string var)
      : hw::Error(msg), time(t), cell(c), variable(std::move(var)) {}
  double time;                 // ms, end of the step that failed
  std::array<int, 3> cell;     // (i, j, k)
  std::string variable;        // state name ("V" for the voltage)
};

class Simulation {
 public:
  // Validates the whole case first (InputError at the offending key's SourceLoc), loads
  // the models, builds kernels and the diffusion operator.
  explicit Simulation(const TissueCase& c, const SimulationOptions& opt = {});
  // The same from a set-up already begun (run::plan prepares one to estimate the memory
  // and check dt): only the stages it has not run are run, so nothing is built twice.
  Simulation(SimSetup&& setup, const SimulationOptions& opt);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // One PDE step (all splitting stages and ODE sub-steps). Throws NumericalError; the
  // previous step's V, time and step count stay as they were.
  void step();
  // Steps until time() ≥ t_ms (to within a thousandth of dt), calling after_step after each.
  void run_until(double t_ms, const std::function<void(const Simulation&)>& after_step = {});

  double time() const;  // ms = steps_done() · dt()
  long steps_done() const;
  double dt() const;
  const Grid& grid() const;
  const Mask& mask() const;  // empty = all tissue
  const TissueCase& tissue_case() const;
  // geometry kind mesh: the mesh (mm, in the frame of grid().origin) the grid was voxelised
  // from, so outputs can sample fields back onto its nodes; null for other geometries.
  std::shared_ptr<const io::UnstructuredMesh> mesh() const;

  // V in mV on the whole grid (non-tissue cells NaN).
  void voltage(Field<float>& out) const;
  // V in mV of one cell by grid index (probes, activation times), NaN off tissue.
  double voltage_at(std::size_t n) const;
  // V (mV) at several grid indices in one read (NaN off tissue).
  void voltages_at(const std::vector<std::size_t>& cells, std::vector<double>& out) const;
  // Any state by name in the model's units ("V" = voltage in mV); cells whose model has no
  // such state are NaN. False if no model region has it.
  bool field(const std::string& variable, Field<float>& out) const;
  // One cell of field(variable) by grid index, without copying the field (probes): NaN off
  // tissue and where the cell's model has no such state.
  double value_at(const std::string& variable, std::size_t n) const;
  // The variables as they stand now, as field() gives them, read later by read() on the
  // snapshot, from any thread: the GPU engine copies them on the device and the bytes
  // reach the host while the steps after go on. hw::Error for a variable no model has.
  // The snapshot must be read or dropped before this simulation goes.
  std::unique_ptr<Snapshot> snapshot(const std::vector<std::string>& variables) const;
  std::size_t tissue_cells() const;
  // The name and units of a field as the models give them, for the outputs' labels
  // (tissue/variable_units.hpp): "V" → {"V", "mV"} or, for a dimensionless model, {"E",
  // "dimensionless"}.
  VariableUnits variable_units(const std::string& variable) const;
  // States per cell (V included) of each model region's part, in the order describe() lists them.
  std::vector<int> part_states() const;
  // Sets V (mV) or a state by name (model units) from grid-sized values (grid order);
  // cells whose value is not finite, and cells off tissue, keep theirs. Works through the
  // canonical state, so every engine takes it alike (to start a spiral by hand). False if
  // no model region has the variable; hw::Error when the size is not the grid's.
  bool set_field(const std::string& variable, const std::vector<double>& values);

  // The complete dynamic state (step count, every state array, V); load_state on a
  // Simulation of the same case continues bit-identically. hw::Error on a mismatch.
  std::vector<std::uint8_t> save_state() const;
  void load_state(const std::vector<std::uint8_t>& bytes);
  // Takes over the dynamic state of `from`, a run of this case with other numbers (the live
  // view's change of a conductivity, a model parameter or dt): the same grid, tissue and
  // models. The time stays (steps = round(time / dt)); the stimuli added to `from` come
  // along on this run's step grid. hw::Error when the runs differ in shape.
  void take_state(const Simulation& from);

  // The parameters of each model region's part, as the case sets them (for the live view's
  // controls): its model, where the case declares it, and each parameter's name and value.
  struct PartParameters {
    std::string model;
    SourceLoc loc;
    std::vector<std::string> names;
    std::vector<double> values;
  };
  std::vector<PartParameters> part_parameters() const;
  // The models' state names but V's, each once, in the order the parts list them.
  std::vector<std::string> state_names() const;

  std::string describe() const;
  // cpu: the mean number of threads the steps so far ran with (it follows the machine's
  // load, parallel/governor.hpp); 0 on other backends.
  double mean_threads() const;
  int thread_moves() const;  // cpu: moves of the stepping thread off a crowded core
  double cg_iterations() const;
  // The engine is still starting up (tuning block shapes): a step's time is not its speed.
  bool warming_up() const;  // implicit diffusion: mean CG iterations per solve (0: explicit)

  // Observers as sinks (tissue/sinks.hpp), made where V lives and fed by the engine after
  // every step from now on; null when the engine leaves them to the caller. Attaching an
  // observer leaves the simulation's state as it is, hence const. A sink dropped by its
  // holder is no longer fed.
  //
  // The activation/APD90 maps from the state m (after the last sample, the current V);
  // null: the caller feeds them from copies of V (the reference engine).
  std::shared_ptr<ActivationSink> attach_activation(const ActivationMaps& m) const;
  // The pseudo-ECG's integrals; null: the caller applies diffusion() to V.
  std::shared_ptr<EcgSink> attach_ecg(const std::vector<std::array<double, 3>>& at, double rmin) const;
  // The values of `variable` at grid cell `cell` for each pair, read together (NaN where the
  // cell's model has no such state). hw::Error for a variable no model has.
  std::shared_ptr<ProbeSink> attach_probes(const std::vector<std::pair<std::string, std::size_t>>& reads) const;
  // The live view's frame: `variable` at the grid cells `cells` (a downsampled slice or
  // three), gathered where the field lives when read; NaN off tissue and where the cell's
  // model has no such state. hw::Error for a variable no model has.
  std::shared_ptr<FrameSink> attach_frame(const std::string& variable, const std::vector<std::size_t>& cells) const;

  // Adds a stimulus from the next step on (the live view's click, a scripted protocol): the
  // same table as the case's [[stimulus]], its times on the run's clock (a pulse before
  // time() is never seen). InputError at st.loc for bad numbers or a region with no tissue;
  // no limit on how many. A checkpoint carries it (save_state).
  void add_stimulus(const Stimulus& st);
  // The stimuli of the run: the case's, then those added.
  std::size_t stimuli() const;

  // The run's diffusion operator as a set-up (σ with the phase field's weight, the mask,
  // stored in rows around the tissue), for outputs that apply it to V on the host. Kept from
  // the run's own set-up when the case has electrodes (the pseudo-ECG); for a case without,
  // built again from the case (a heart's geometry is resampled): call it once.
  DiffusionSetup diffusion() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Bytes a cpu-backend run of c will hold. run: state arrays in the case's precision (the
// voltage lives only in two fields of the row layout around the tissue), per-cell
// parameters when gradients need them, cell lists of non-box regions, operator weights,
// mask/labels, solver vectors. setup: box-sized data (a per-voxel tensor, fibres, φ) that
// the set-up holds until the engine has built its own arrays, then frees.
struct MemoryEstimate {
  std::size_t run = 0;
  std::size_t setup = 0;       // freed before the first step
  std::size_t snapshots = 0;   // field outputs in flight while stepping (on the GPU, device and pinned host)
  std::size_t checkpoint = 0;  // a checkpoint being written: the canonical state (double) and its bytes
  std::size_t peak() const { return run + std::max({setup, snapshots, checkpoint}); }
};
MemoryEstimate estimate_memory(const TissueCase& c);

// The explicit (forward Euler) diffusion limit on dt in ms: 2χCm / λ_max bound of −L.
double stable_dt_limit(const TissueCase& c);

}  // namespace hw::tissue
