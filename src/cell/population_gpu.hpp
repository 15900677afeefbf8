// Populations of independent cells on the GPU: run_population's inputs and outputs, one
// thread per cell.
//
// Why its own kernel rather than the CellKernel: on the GPU the model is the CUDA printed
// from the analysed model (model/emit/cuda_printer), compiled by NVRTC with the integrator
// chosen at compile time, so a cell's states and parameters stay in registers for a whole
// launch. The launches follow the cpu runner exactly (kernels/population_k.hpp): before the
// last beat one launch per stimulus interval (split into launches of at most
// kPopulationMaxLaunchSteps steps), the last beat with every cell's BeatTracker on the
// device, so the host only reads the trackers back at the end. Cells that do not fit in
// device memory at once run in batches.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cell/population.hpp"
#include "device/compile.hpp"
#include "kernels/population_k.hpp"
#include "model/emit/cell_maths.hpp"
#include "model/ir/model.hpp"

namespace hw::cell {

// Steps per launch at most: a launch of 10^6 O'Hara-Rudy cells then stays near a second,
// and splitting costs nothing (each launch keeps the cpu's times, population_k.hpp).
inline constexpr long kPopulationMaxLaunchSteps = 10000;

// What ran, for the CLI's report.
struct GpuPopulationInfo {
  std::string device;  // "NVIDIA H100 80GB HBM3 (sm_90)"
  std::string kernel;  // "compiled in 3.1 s, 96 registers" (NVRTC, or "from the cache")
  std::size_t batch = 0;  // cells on the device at once
  double device_ms = 0;   // kernel time, all batches
  // Cells with a state that is not finite (NaN or ±inf) at the end: the population kernel
  // has no NaN policy (a cell that blows up runs on in NaN arithmetic, its biomarkers NaN),
  // so a benchmark must say when its time was spent on such cells (bench population).
  std::size_t nonfinite = 0;
};

// `analysed` is the model the setup was made from (model::load_model(...).analysed). Throws
// InputError for what the GPU does not run (CVODE), hw::Error with gpu_status().why
// where there is no usable GPU.
PopulationResult run_population_gpu(const model::Model& analysed, const CellSetup& setup,
                                    const PopulationDesign& design, const StimulusTrain& train,
                                    const PopulationOptions& options,
                                    GpuPopulationInfo* info = nullptr);

// InputError, naming the option, when the solver cannot run on the GPU (CVODE).
void check_gpu_population(const SolverOptions& solver);

// Which backend a population runs on: "cpu", "cuda" or "auto" (the GPU where
// gpu_status().usable and the solver runs there, else cpu). `note` gets one line for the
// user naming the choice and the device, or why auto chose the cpu. "cuda" without a
// usable GPU throws hw::Error with the reason.
bool choose_population_gpu(const std::string& backend, const SolverOptions& solver,
                           std::string* note);

// The parameters no cell of the design varies, with their values (the design's value where
// a column holds one value throughout, else the setup's), nullopt for the others and for
// the stimulus switch. The GPU kernel is compiled with these as constants (as the tissue
// engine does): their expressions fold away and each thread holds only the varying ones,
// which for O'Hara-Rudy (99 parameters, 83 once-per-cell constants) is what keeps a cell
// in registers.
std::vector<std::optional<double>> population_fixed_parameters(const CellSetup& setup,
                                                               const PopulationDesign& design);

// The kernel source: the printed model (the parameters in `fixed`, from
// population_fixed_parameters, as constants), its static description (M of
// population_k.hpp) and two extern "C" __global__ kernels of a PopulationArgs<real>:
// hw_population for the launches before the last beat, hw_population_track for the last's.
// maths: lookup tables of V made from the specialised model, fast intrinsics (float).
gpu::CudaSource population_kernel_source(const model::Model& analysed, const CellSetup& setup,
                                         Integrator method, bool f32,
                                         const std::vector<std::optional<double>>& fixed, model::CellMaths maths = {});

// The launches that take one batch of cells through the train, in order, as the cpu's
// run_chunk steps it (see population_k.hpp); at most max_steps steps each.
std::vector<kernels::PopulationLaunch> population_launches(const StimulusTrain& train,
                                                           double dt_ms, long max_steps);

}  // namespace hw::cell
