// The engine interface: what a monodomain backend implements behind tissue::Simulation.
//
// Why an interface in the open: the reference oracle, the cpu engine and the CUDA engine
// own their arrays in their own layouts (the box, compressed rows on the host, the same rows
// in device memory) and share the set-up (tissue/reaction.hpp), not their stepping; what the
// reference oracle still shares with the fast engines (the set-up, the link walker, the
// model IR) and why that is safe is listed in tissue/reference_engine.cpp. Simulation, the
// outputs and checkpoints talk to this and nothing else, so a state saved by one engine
// loads into any other (the canonical state format below).
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/bytes.hpp"
#include "tissue/diffusion.hpp"
#include "mesh/grid.hpp"
#include "tissue/reaction.hpp"
#include "tissue/sinks.hpp"

namespace hw::gpu {
class Device;
}
namespace hw::comm {
class Communicator;  // comm/communicator.hpp
}

namespace hw::tissue {

// What an engine tells a user about how it runs (Simulation::describe prints it).
struct EngineInfo {
  std::string backend;   // "cpu (float, 2 threads)", "cuda (NVIDIA H100 80GB HBM3, sm_90, float)"
  std::string storage;   // how the fields are stored
  std::string kernels;   // the diffusion/reaction kernels and why
  std::vector<std::string> part_kernels;  // per part: the cell kernel that runs it
  double threads = 0;  // cpu: the mean team size over the steps so far (it follows the load)
  int thread_moves = 0;  // cpu: times the stepping thread moved off a crowded core (parallel/placement.hpp)
  double cg_iterations = 0;  // implicit diffusion: mean CG iterations per solve so far (0: explicit)
};

// The canonical dynamic state, the same bytes whichever engine wrote it: for each part its
// states but V (state-major over the part's cells, as Part orders them), then V in mV on the
// tissue cells in grid order, all in the engine's precision (tag: 4 or 8 bytes).
struct CanonicalState {
  std::uint8_t bytes = 8;
  std::vector<std::vector<double>> parts;  // (ns − 1)·n values each
  std::vector<double> v;                   // tissue_cells values
};
void write_canonical(const CanonicalState& st, ByteWriter& out);
// Reads a state of `parts` sizes (values per part) and `tissue` V values; hw::Error when
// truncated. Values of another precision than `bytes` are converted.
void read_canonical(ByteReader& in, const std::vector<std::size_t>& parts, std::size_t tissue,
                    CanonicalState& st);

class Engine {
 public:
  virtual ~Engine() = default;
  // Advances from step n to n + 1; throws NumericalError and keeps the last good V.
  virtual void step(long n) = 0;
  // Steps n .. n+count−1 with no look at the state in between (a GPU engine queues them
  // all); `done` receives the steps completed, also when a NumericalError is thrown.
  virtual void advance(long n, long count, long& done) {
    for (done = 0; done < count; ++done) step(n + done);
  }
  virtual void voltage(Field<float>& out) const = 0;       // grid-sized, NaN off tissue
  virtual double voltage_at(std::size_t n) const = 0;      // grid index; NaN off tissue
  // V at several grid indices (NaN off tissue) in one read: a GPU engine waits once, not
  // once per cell.
  virtual void voltages_at(const std::vector<std::size_t>& cells, std::vector<double>& out) const {
    out.resize(cells.size());
    for (std::size_t q = 0; q < cells.size(); ++q) out[q] = voltage_at(cells[q]);
  }
  virtual void state(std::size_t part, int k, Field<float>& out) const = 0;  // fills the part's cells
  virtual double state_at(std::size_t part, int k, std::size_t i) const = 0;  // the part's cell i
  virtual CanonicalState save() const = 0;
  virtual void load(const CanonicalState& st) = 0;
  virtual EngineInfo describe() const = 0;
  // Still starting up: steps now are slower than the run's (the GPU's block-shape trials).
  virtual bool warming_up() const { return false; }
  // Bytes the engine holds for the run, its sinks' included (device memory for a GPU engine).
  virtual std::size_t memory_bytes() const { return 0; }
  // Where the observers the run attaches live (tissue/sinks.hpp).
  virtual SinkHost& sinks() const = 0;
};

// The CUDA engine's choices a test or a benchmark may force. Each defaults to its
// environment variable (docs/gpu.md lists them), which only overrides the default.
struct CudaEngineOptions {
  // A kernel variant by name (tissue/cuda/variants.hpp: cell, capped, fenced,
  // fenced-capped, window, tower) left alone to the tuner; "": the tuner picks among all
  // offered. Default: HEARTWAVE_CUDA_KERNEL.
  std::string kernel;
  // Batches of steps without a stimulus as CUDA graphs. Default: on unless
  // HEARTWAVE_CUDA_GRAPHS=0.
  bool graphs = true;
  static CudaEngineOptions from_environment();
};

struct EngineOptions {
  Backend backend = Backend::cpu;
  int threads = 0;            // cpu: the most threads (0: the cores this process may use)
  bool adapt_threads = true;  // cpu: fewer threads while that is faster (parallel/governor.hpp)
  int device = 0;             // cuda: the GPU to open (its ordinal), unless `on` is given
  std::shared_ptr<gpu::Device> on;  // cuda: the Device to run on (several engines may share one)
  CudaEngineOptions cuda = CudaEngineOptions::from_environment();
  // The ranks the run is split over (docs/parallel.md); null or one rank: the whole grid
  // here. The cpu and cuda engines split (hw::Error for the reference engine with more than
  // one rank).
  comm::Communicator* comm = nullptr;
};

// The engine for opt.backend on set-up s (which must outlive it). Backend::cuda throws
// hw::Error with the reason when there is no usable GPU or the build has no CUDA.
std::unique_ptr<Engine> make_engine(const SimSetup& s, const EngineOptions& opt);

// Each backend's factory.
std::unique_ptr<Engine> make_reference_engine(const SimSetup& s);
std::unique_ptr<Engine> make_cpu_engine(const SimSetup& s, int threads, bool adapt_threads = true,
                                        comm::Communicator* comm = nullptr);
std::unique_ptr<Engine> make_cuda_engine(const SimSetup& s, std::shared_ptr<gpu::Device> on,
                                         const CudaEngineOptions& opt = CudaEngineOptions::from_environment(),
                                         comm::Communicator* comm = nullptr);

// A backend by name: reference, cpu, cuda, or auto (cuda where a usable GPU and driver are
// found, else cpu). *note receives one line for the user: what was chosen, on what device,
// or why not the GPU. hw::Error for an unknown name or for cuda without a usable GPU.
Backend choose_backend(const std::string& name, std::string* note = nullptr);

// The initial state of set-up s in the canonical form, which every engine loads when it is
// made: each part's states at the model's defaults, V = the voltage state's default (mV) on
// the part's cells, then the case's initial conditions in order.
CanonicalState initial_state(const SimSetup& s);

// The variable to name when cell i of part p went non-finite: its first state but V that is
// not finite (state_at(k) reads state k of the cell), else "V".
template <class StateAt>
std::string failing_variable(const Part& p, StateAt state_at) {
  for (int k = 0; k < p.ns; ++k)
    if (k != p.kv && !std::isfinite(double(state_at(k)))) return p.setup.state_names[std::size_t(k)];
  return "V";
}
// The same from a GPU kernel's report: state k (−1: V) at grid cell `cell`.
std::string failing_variable(const SimSetup& s, std::size_t cell, int k);

// The grid index (i, j, k) of cell n, for messages.
std::array<int, 3> grid_ijk(const Grid& g, std::size_t n);
// The NaN-policy error for cell n (grid index) and variable at the end of the step from t.
[[noreturn]] void throw_numerical_error(const Grid& g, std::size_t cell, const std::string& variable,
                                        double t, double dt, bool tables = false);

}  // namespace hw::tissue
