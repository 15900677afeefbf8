// Populations of independent cells that differ in parameter values.
//
// Why a batch: all cells run as one structure-of-arrays batch with per-cell parameters,
// split into chunks of cells across OpenMP threads, through the same CellKernel::step the
// single-cell runner uses. Biomarkers of the last beat are computed while it streams, one
// BeatTracker per cell, so memory is O(N), never O(N·steps). Earlier beats run in long
// multi-step calls between stimulus edges.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "cell/biomarkers.hpp"
#include "runtime/cell_kernel.hpp"
#include "cell/cell_setup.hpp"
#include "cell/pacing.hpp"
#include "cell/single_cell.hpp"

namespace hw::cell {

// A range of one parameter: lo..hi, with n points on a grid (n unused for random/LHS).
struct ParameterRange {
  std::string name;
  double lo = 1, hi = 1;
  int n = 1;
};

// Parses "g_Kr=0.5:1.5:5" (grid) or "g_Kr=0.5:1.5" (random / LHS); InputError otherwise.
ParameterRange parse_range(const std::string& spec, bool with_count);

// Per-cell parameter values: cell c has values[c * names.size() + j] for names[j].
// `scaling` = the values multiply the model's defaults; else they replace them.
struct PopulationDesign {
  std::vector<std::string> names;
  std::vector<double> values;
  bool scaling = true;
  std::size_t cells() const { return names.empty() ? 0 : values.size() / names.size(); }
};

// Cartesian product of the ranges' grids (first range varies slowest).
PopulationDesign grid_design(const std::vector<ParameterRange>& ranges);
// n cells uniformly at random in the box, or by Latin hypercube sampling, from a seed.
PopulationDesign random_design(const std::vector<ParameterRange>& ranges, std::size_t n,
                               unsigned long long seed, bool latin_hypercube);
// CSV with a header of parameter names and one row of absolute values per cell.
PopulationDesign csv_design(const std::string& path);

struct PopulationOptions {
  SolverOptions solver;   // fixed-step only
  int threads = 0;        // 0 = OpenMP's default
  std::size_t chunk = 64;  // cells per task
  // GPU (cell/population_gpu.hpp): cells on the device at once; 0 = as many as fit.
  std::size_t gpu_batch = 0;
  int gpu_device = 0;  // the GPU it runs on (--device)
  StopCheck stop;  // polled before each chunk (GPU: batch); true leaves the ones not begun undone
};

struct PopulationResult {
  std::vector<BeatBiomarkers> last_beat;  // one per cell
  std::vector<std::uint8_t> done;         // per cell, 1 when run; empty: every cell ran
  // Cells run whose state ended non-finite (NaN or inf): their biomarkers are NaN. The runner
  // has no NaN policy (a cell is not stopped); this says how many, so a sweep can warn.
  std::size_t nonfinite = 0;
  bool finished(std::size_t cell) const { return done.empty() || done[cell] != 0; }
  std::size_t cells_done() const;
};

PopulationResult run_population(const CellKernel& kernel, const CellSetup& setup,
                                const PopulationDesign& design, const StimulusTrain& train,
                                const PopulationOptions& options);

// The population's starting arrays, structure-of-arrays over the n cells: state k of cell c
// at y[k*n + c] (initial values), parameter k at p[k*n + c] (the setup's values with the
// design's applied). Unknown design names throw the located "no such parameter" error.
// Shared by the cpu and GPU runners so both start from the same numbers.
template <class Real>
void population_arrays(const CellSetup& setup, const PopulationDesign& design,
                       std::vector<Real>& y, std::vector<Real>& p);

// Cells of a population's state arrays (n cells, ns states, state k of cell c at y[k*n + c])
// with a state that is not finite (NaN or ±inf); with `done` (PopulationResult::done, may
// be empty: all), only the cells that ran. The cpu and GPU runners both count with it.
template <class Real>
std::size_t count_nonfinite_cells(const Real* y, std::size_t n, std::size_t ns,
                                  const std::vector<std::uint8_t>& done = {});

// One row per cell: "cell,<parameter names...>,apd90,..." with the absolute values used.
// Only the cells that ran (PopulationResult::finished).
void write_population_csv(const CellSetup& setup, const PopulationDesign& design,
                          const PopulationResult& result, std::ostream& out);
// Its parts: the header line, and the row of the design's cell `c` labelled `label` (a
// resumed sweep runs the cells left as a smaller design and labels them as in the whole).
std::string population_csv_header(const PopulationDesign& design);
std::string population_csv_row(const CellSetup& setup, const PopulationDesign& design, std::size_t c,
                               const BeatBiomarkers& b, std::size_t label);

}  // namespace hw::cell
