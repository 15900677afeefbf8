// Named tissue performance cases and the memory-bandwidth roof they are judged against.
//
// Why in the library: `heartwave bench`, bench/bench_tissue.cpp and the correctness test of
// the cases all run exactly these cases, and the roof is measured in the same process (on a
// shared machine a roof from another day means nothing). docs/benchmarks.md, "Tissue (CPU)",
// has the traffic model and the measured table.
#pragma once

#include <string>
#include <vector>

#include "tissue/case.hpp"
#include "tissue/diffusion.hpp"

namespace hw::tissue {

// STREAM-style copy b[i] = a[i] over two 512 MiB float arrays (1 GiB: about 4 × the 260 MiB
// L3 the development VM reports), OpenMP static schedule, first-touch by the same threads,
// best of six repetitions. GB/s = 2 · bytes of one array / seconds (read
// + write; the write-allocate read is not counted, as in STREAM). array_mib shrinks the
// arrays (tests).
double measure_copy_bandwidth_gbs(int threads, int array_mib = 512);

struct BenchResult {
  std::string name;
  long cells = 0;   // tissue cells
  long steps = 0;   // PDE steps timed (after one untimed warm-up step)
  double seconds = 0;
  double cell_steps_per_s = 0;
  double bytes_per_cell_step = 0;  // the traffic model: 2 · sizeof(Real) · states
  double achieved_gbs = 0;         // cell_steps_per_s · bytes_per_cell_step / 1e9
  double roof_gbs = 0;             // measure_copy_bandwidth_gbs(threads), same process
                                   // (a device-to-device copy on the GPU)
  double steps_per_s = 0;
  double wall_per_simulated_s = 0;  // wall seconds per simulated second
  double threads = 0;               // cpu: mean team size over the timed steps
  int thread_moves = 0;             // cpu: moves of the stepping thread off a crowded core
  std::string notes;               // diffusion scheme, kernel, precision
};

// karma2d, karma3d, tt06-3d, niederer-0.2.
std::vector<std::string> tissue_benchmark_names();
// The GPU sizes: karma3d-256, karma3d-512, karma3d-weak (256³ per rank), tt06-3d-256, niederer-0.05, and two hearts from
// ../shared (or $HEARTWAVE_SHARED_DIR): rabbit-tt06 (UCSD rabbit, 0.25 mm, TT06, rule-based
// fibres), ord-pig128 (O'Hara-Rudy in the 128³ pig phase field) and ord-heart (the same heart
// resampled to 0.25 mm: 6.6 M cells).
std::vector<std::string> gpu_benchmark_names();
// GPU cases too large for `bench all` (karma3d-1024); each runs by its name.
std::vector<std::string> large_gpu_benchmark_names();

// The case behind a name; n > 0 replaces the cells per axis (Niederer: cells along x, the
// spacing 20 mm / n) so tests can run the same set-up tiny. InputError for an unknown name.
TissueCase tissue_benchmark_case(const std::string& name, int n = 0);

struct BenchOptions {
  Backend backend = Backend::cpu;
  int threads = 0;            // cpu: the most threads (0: the cores this process may use)
  bool adapt_threads = true;  // cpu: fewer threads while that is faster (parallel/governor.hpp)
  double seconds = 3;         // timed stepping, at least 2 steps
  double warmup_seconds = 0;  // untimed stepping first (at least one step)
  int n = 0;                  // cells per axis, 0: the case's own (tissue_benchmark_case)
  double roof_gbs = -1;       // < 0: measure the roof here; 0: skip it; else reuse this value
  model::CellMaths cell_maths;  // time.cell_maths (model/emit/cell_maths.hpp)
};

// Builds the case, steps for the warm-up (one step at least: page faults of the second V
// field, a kernel's first use), then for about o.seconds. The roof is the machine's copy
// bandwidth on o.threads (a device-to-device copy for cuda).
BenchResult run_tissue_benchmark(const std::string& name, const BenchOptions& o);

}  // namespace hw::tissue
